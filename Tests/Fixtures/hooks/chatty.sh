#!/bin/sh
# Prints $1 bytes to stdout and to stderr, then exits 0.
head -c "$1" /dev/zero | tr '\0' 'o'
head -c "$1" /dev/zero | tr '\0' 'e' >&2
