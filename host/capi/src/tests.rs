//! Tests of the ABI, calling the exported functions as C would.
