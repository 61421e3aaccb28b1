"""The ``files`` room: a workspace's files for clients (listing, reading, downloads), the
add-project picker's directory suggestions and the editors of this machine."""
