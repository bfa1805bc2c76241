# SPDX-License-Identifier: Apache-2.0
# How the installed binaries are built: `make release`, `make install` and the Debian package (debian/rules) include
# this file, so that all three build the same binaries. Measured on shaked and shakectl, stripped (docs/architecture.md,
# "Binary size"):
# - the Swift runtime linked in (--static-swift-stdlib): the binaries keep working when the toolchain changes or goes;
# - every function in a section of its own (-function-sections), so that the linker's --gc-sections (SwiftPM passes it
#   in release) drops the functions of the packages' sources that nothing calls, not only whole files;
# - no dynamic export of every symbol (--no-export-dynamic): the static runtime's link arguments export them all, and
#   their names took 1.4 MB that nothing looks up (the Swift runtime finds its metadata through its sections);
# - linked by gold, the toolchain's default, named so that nothing else is picked: relocations read-only after start
#   (-z relro, a GNU_RELRO segment) and bound at start (-z now), as Debian's hardening (and lintian) asks. GNU ld
#   (bfd) would pack relative relocations (-z pack-relative-relocs, 1.3 MB less), but the static runtime's objects
#   carry writable .rodata sections, which make bfd's .rodata writable and leave the binary without GNU_RELRO
#   (lintian: hardening-no-relro); lld makes GNU_RELRO and packs them, but extracts classic Foundation and ICU's
#   data from the static libraries (63 MB).
RELEASE_SWIFT_FLAGS = --static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -function-sections \
	-Xswiftc -use-ld=gold -Xlinker --no-export-dynamic -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
