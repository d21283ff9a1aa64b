#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Generate configure and the Makefile.in files from a git checkout.
set -e
cd "$(dirname "$0")"
autoreconf -fi
cp -f "$(automake --print-libdir)/tap-driver.sh" build-aux/tap-driver.sh
