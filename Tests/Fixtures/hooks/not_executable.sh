#!/bin/sh
# Deliberately NOT executable (mode 0644): running it must fail with EACCES.
exit 0
