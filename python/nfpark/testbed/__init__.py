"""`nfpark testbed`: real hosts (network namespaces) around nfpark's switch and NF servers."""
