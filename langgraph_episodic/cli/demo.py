"""placeholder"""
import argparse
def add_arguments(p: argparse.ArgumentParser) -> None:
    pass
def run(args: argparse.Namespace) -> int:
    return 0
