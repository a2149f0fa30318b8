"""Thin routes: parse, call the store or the queue, shape the answer."""
