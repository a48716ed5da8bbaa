"""The command-line interface: a Typer app and one thin module per command."""
