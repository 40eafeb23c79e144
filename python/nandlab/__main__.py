"""``python -m nandlab``: the nandlab command line (see `nandlab._cli`)."""

from ._cli import console_main

if __name__ == "__main__":
    console_main()
