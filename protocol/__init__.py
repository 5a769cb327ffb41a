"""paneboard's wire: post types, ids, names, the codec and the composed text. Pure: no I/O.

Import the module that holds a name (`paneboard.protocol.posts`, …): `paneboard post` loads only
the small modules it needs, never msgspec.
"""
