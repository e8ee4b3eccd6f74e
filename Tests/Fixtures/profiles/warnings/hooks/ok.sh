#!/bin/sh
# A well-behaved test hook.
exit 0
