"""The board on NATS JetStream: the connection, the store, its followers and ordered tail, presence
in a key-value bucket, the stream's report, the `--store` URL.
"""
