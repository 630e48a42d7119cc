"""`python -m autograder.sandbox.zygote`: the zygote's process, inside its sandbox (see server.py)."""

from autograder.sandbox.zygote.server import main

if __name__ == "__main__":
    main()
