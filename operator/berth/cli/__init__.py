"""Berth's command line: wiring and flags only; the work lives in the layers below."""
