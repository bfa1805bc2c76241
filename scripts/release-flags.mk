# How the installed binaries are built: `make release`, `make install` and the Debian package (debian/rules) include
# this file, so that all three build the same binaries. Measured on shaked and shakectl, stripped (docs/architecture.md,
# "Binary size"):
# - the Swift runtime linked in (--static-swift-stdlib): the binaries keep working when the toolchain changes or goes;
# - every function in a section of its own (-function-sections), so that the linker's --gc-sections (SwiftPM passes it
#   in release) drops the functions of the packages' sources that nothing calls, not only whole files;
# - no dynamic export of every symbol (--no-export-dynamic): the static runtime's link arguments export them all, and
#   their names took 1.4 MB that nothing looks up (the Swift runtime finds its metadata through its sections);
# - relative relocations packed (-z pack-relative-relocs, DT_RELR, glibc 2.36 and later): a position-independent
#   binary's pointers into itself take a few bits each instead of 24 bytes. Only GNU ld (bfd) writes them; gold, the
#   toolchain's default, does not.
RELEASE_SWIFT_FLAGS = --static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -function-sections \
	-Xswiftc -use-ld=bfd -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic
