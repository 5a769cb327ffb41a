"""Who is trusted: keys and their pins, the seal on a post, each post's verdict, and a
recipient's policy on what reaches it.
"""
