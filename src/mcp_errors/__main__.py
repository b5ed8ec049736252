"""`python -m mcp_errors`: the same command line as the `mcp-errors` script."""

from mcp_errors._cli import main

if __name__ == "__main__":
    main()
