// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// `make deb`'s package: the one `make test` built just before with `make deb` (SHAKED_DEB names it: release
/// binaries, the way a maker builds it), else one built by dpkg-buildpackage from the binaries this test run built
/// (scripts/deb.sh with SHAKED_PREBUILT). Checked by lintian, read with dpkg-deb, installed into, removed from and
/// purged from a throwaway root with `dpkg --root` (maintainer scripts run with DPKG_ROOT, never touching this
/// machine), and its maintainer scripts run as on a live system, in a mount namespace of their own, against
/// commands that record what they are asked.
@Suite(.serialized, .enabled(if: DebianPackage.toolsPresent, "dpkg-buildpackage, debhelper or lintian is missing"))
struct DebianPackageTests {
    /// What the package installs, as `dpkg-deb --contents` lists it (files and links, folders left out).
    static let contents = [
        "etc/shaked/shaked.yaml",
        "lib/systemd/system/shaked.service",
        "lib/systemd/system/shaked.socket",
        "lib/udev/rules.d/60-shaked.rules",
        "lib/udev/rules.d/70-shaked-uinput.rules",
        "lib/udev/rules.d/81-shaked-iio-sensor-proxy.rules",
        "usr/bin/shakectl",
        "usr/lib/modules-load.d/shaked.conf",
        "usr/lib/systemd/user/shake-to-undo.service",
        "usr/lib/sysusers.d/shaked.conf",
        "usr/lib/tmpfiles.d/shaked.conf",
        "usr/sbin/shaked",
        "usr/share/bash-completion/completions/shakectl",
        "usr/share/dbus-1/system-services/io.github.shaked.Shake1.service",
        "usr/share/dbus-1/system.d/io.github.shaked.Shake1.conf",
        "usr/share/doc/shaked/changelog.gz",
        "usr/share/doc/shaked/copyright",
        "usr/share/doc/shaked/examples/python/README.md",
        "usr/share/doc/shaked/examples/python/shake_dbus.py",
        "usr/share/doc/shaked/examples/python/shake_listener.py",
        "usr/share/doc/shaked/examples/systemd/shake-to-undo.service",
        "usr/share/doc/shaked/protocol.md.gz",
        "usr/share/fish/vendor_completions.d/shakectl.fish",
        "usr/share/lintian/overrides/shaked",
        "usr/share/man/man1/shakectl.1.gz",
        "usr/share/man/man5/shaked.yaml.5.gz",
        "usr/share/man/man8/shaked.8.gz",
        "usr/share/zsh/site-functions/_shakectl",
    ]

    @Test func thePackageBuildsLintsCleanAndHoldsWhatItShould() async throws {
        let package = try await DebianPackage.built.value.get()
        let control = try await DebianPackage.field(package, nil)
        #expect(control.contains("Package: shaked\n"))
        let depends = try await DebianPackage.field(package, "Depends")
        for runtime in ["libiio0", "libsystemd0", "systemd | systemd-standalone-sysusers"] {
            #expect(depends.contains(runtime), "Depends: \(depends)")
        }
        // Build and test tools are not run-time dependencies.
        for buildOnly in ["-dev", "umockdev", "pkg-config", "debhelper", "swift", "librsvg", "python"] {
            #expect(!depends.contains(buildOnly), "Depends: \(depends)")
        }
        #expect(try await DebianPackage.field(package, "Suggests").contains("librsvg2-bin"))

        #expect(try await DebianPackage.contents(package) == Self.contents)

        let controlFiles = try await DebianPackage.extractControl(package)
        let conffiles = try String(contentsOfFile: "\(controlFiles)/conffiles", encoding: .utf8)
        #expect(conffiles == "/etc/shaked/shaked.yaml\n")
        let postinst = try String(contentsOfFile: "\(controlFiles)/postinst", encoding: .utf8)
        #expect(postinst.contains("systemd-sysusers ${DPKG_ROOT:+--root=\"$DPKG_ROOT\"} shaked.conf"))
        #expect(postinst.contains("systemd-tmpfiles ${DPKG_ROOT:+--root=\"$DPKG_ROOT\"} --create shaked.conf"))
        #expect(postinst.contains("deb-systemd-helper enable 'shaked.socket'"))

        // Binaries are stripped: no symbol table, no debugging sections (those are in the -dbgsym package).
        let unpacked = try await DebianPackage.unpack(package)
        for binary in ["usr/sbin/shaked", "usr/bin/shakectl"] {
            let sections = try await Command.run("/usr/bin/readelf", ["-S", "-W", "\(unpacked)/\(binary)"]).stdout
            #expect(!sections.contains(".symtab"), "\(binary) is not stripped")
            #expect(!sections.contains(".debug_info"), "\(binary) carries debugging information")
        }
        let service = try String(contentsOfFile: "\(unpacked)/lib/systemd/system/shaked.service", encoding: .utf8)
        #expect(service.contains("\nExecStart=/usr/sbin/shaked --config /etc/shaked/shaked.yaml\n"))
        // Shake to undo as a user unit, not enabled for anybody (pressing Ctrl+Z on every shake is a choice), and
        // uinput loaded at boot.
        let undo = try String(
            contentsOfFile: "\(unpacked)/usr/lib/systemd/user/shake-to-undo.service", encoding: .utf8)
        #expect(undo.contains("shakectl key"))
        let modules = try String(contentsOfFile: "\(unpacked)/usr/lib/modules-load.d/shaked.conf", encoding: .utf8)
        #expect(modules.split(separator: "\n").filter { !$0.hasPrefix("#") } == ["uinput"])
    }

    /// What lintian's hardening checks read: a GNU_RELRO segment and immediate binding, on the binaries as the
    /// package ships them; then lintian itself, failing on warnings.
    @Test func theBinariesAreHardenedAndLintianPasses() async throws {
        let package = try await DebianPackage.built.value.get()
        let unpacked = try await DebianPackage.unpack(package)
        for binary in ["usr/sbin/shaked", "usr/bin/shakectl"] {
            let segments = try await Command.run("/usr/bin/readelf", ["-l", "-W", "\(unpacked)/\(binary)"]).stdout
            #expect(segments.contains("GNU_RELRO"), "\(binary) has no GNU_RELRO segment")
            // (The test run's own debug binaries are linked without it.)
            let dynamic = try await Command.run("/usr/bin/readelf", ["-d", "-W", "\(unpacked)/\(binary)"]).stdout
            #expect(
                DebianPackage.isPrebuilt || dynamic.contains("BIND_NOW") || dynamic.contains("Flags: NOW"),
                "\(binary) is not bound at start")
        }
        // Binaries built for the tests load the Swift runtime from the toolchain (a RUNPATH); a package's are
        // self-contained.
        let suppress = DebianPackage.isPrebuilt ? ["--suppress-tags", "custom-library-search-path"] : []
        let lintian = try await Command.run(
            "/usr/bin/lintian", ["--fail-on", "error,warning", "--info"] + suppress + [package])
        #expect(lintian.status == 0, "lintian: \(lintian.stdout)\(lintian.stderr)")
    }

    /// The maintainer scripts as they run on a live system (no DPKG_ROOT, udev and systemd running), in a mount
    /// namespace whose /run says so, against recording stand-ins for modprobe, udevadm, systemctl, shakectl and
    /// debhelper's helpers: the order in which they hand the sensor over and take the grants back.
    @Test func theMaintainerScriptsLoadUinputHandOverAndUndoTheirGrants() async throws {
        let package = try await DebianPackage.built.value.get()
        let control = try await DebianPackage.extractControl(package)
        let calls = try await DebianPackage.liveScripts(control, [("postinst", ["configure", ""])])
        func index(_ call: String) -> Int? { calls.firstIndex { $0.hasPrefix(call) } }
        // uinput is loaded before udev is asked to give /dev/uinput its group.
        let modprobe = try #require(index("modprobe uinput"), "\(calls)")
        let uinput = try #require(
            index("udevadm trigger --action=change --subsystem-match=misc --sysname-match=uinput"), "\(calls)")
        let reload = try #require(index("udevadm control --reload"), "\(calls)")
        let iio = try #require(index("udevadm trigger --action=change --subsystem-match=iio"), "\(calls)")
        #expect(modprobe < uinput && reload < uinput && reload < iio)
        // dbus-daemon reads the bus policy again now that the user it names exists, before udev's events or the
        // hand-over can start the daemon (which would be refused its name otherwise).
        let busReload = try #require(index("deb-systemd-invoke reload dbus.service"), "\(calls)")
        #expect(busReload < uinput && busReload < iio, "\(calls)")
        // The hand-over: iio-sensor-proxy lets go of the device before shaked starts (a connection to its socket
        // starts it), and comes back after.
        let stopProxy = try #require(index("deb-systemd-invoke stop iio-sensor-proxy.service"), "\(calls)")
        // (A daemon udev started while iio-sensor-proxy still held the device starts afresh, its back-off gone.)
        let restartShaked = try #require(index("deb-systemd-invoke restart shaked.service"), "\(calls)")
        let startShaked = try #require(index("shakectl status --socket /run/shaked/shaked.sock"), "\(calls)")
        #expect(stopProxy < restartShaked && restartShaked < startShaked, "\(calls)")
        let startProxy = try #require(index("deb-systemd-invoke start iio-sensor-proxy.service"), "\(calls)")
        #expect(iio < stopProxy && stopProxy < startShaked && startShaked < startProxy, "\(calls)")
        // The socket is enabled; the shake-to-undo user unit is not, for anybody (each user's choice).
        #expect(calls.contains("deb-systemd-helper enable shaked.socket"), "\(calls)")
        #expect(!calls.contains { $0.contains("--user enable") }, "\(calls)")

        // Removal: the socket stops with the service (nothing activates it again), and what the rules granted is
        // taken back now: /dev/uinput and the IIO devices go through udev again, and iio-sensor-proxy takes its
        // sensor back.
        let removal = try await DebianPackage.liveScripts(control, [("prerm", ["remove"]), ("postrm", ["remove"])])
        #expect(
            removal.contains { $0.hasPrefix("deb-systemd-invoke stop") && $0.contains("shaked.socket") },
            "\(removal)")
        let stops = removal.filter { $0.hasPrefix("deb-systemd-invoke stop") }
        #expect(stops.first?.contains("shaked.socket") == true, "the service stopped before its socket: \(stops)")
        #expect(removal.contains("udevadm trigger --action=change --subsystem-match=misc --sysname-match=uinput"))
        #expect(removal.contains("udevadm trigger --action=change --subsystem-match=iio"))
        #expect(removal.contains("deb-systemd-invoke restart iio-sensor-proxy.service"), "\(removal)")
    }

    /// An upgrade, as dpkg runs the scripts (the old package's prerm and postrm played by this one's): the socket
    /// is neither stopped before the unpacking nor restarted after, so that it listens throughout and subscribers
    /// reconnect to it at once; the daemon is restarted on the new binary only after it is unpacked. (Before,
    /// the preinst stopped the service and the socket, which the service's Also= named, and the postinst restarted
    /// the socket: no socket for as long as dpkg unpacked, and the daemon down with it.)
    @Test func anUpgradeKeepsTheSocketAndRestartsTheDaemonAfterUnpacking() async throws {
        let package = try await DebianPackage.built.value.get()
        let control = try await DebianPackage.extractControl(package)
        // (A package without a preinst has nothing to run before unpacking.)
        let upgrade = [
            ("prerm", ["upgrade", "0.3.1"]), ("preinst", ["upgrade", "0.3.0"]),
            ("postrm", ["upgrade", "0.3.1"]), ("postinst", ["configure", "0.3.0"]),
        ].filter { FileManager.default.fileExists(atPath: "\(control)/\($0.0)") }
        let calls = try await DebianPackage.liveScripts(control, upgrade)
        let invoked = calls.filter { $0.hasPrefix("deb-systemd-invoke") }
        #expect(
            !invoked.contains { $0.contains("shaked.socket") && !$0.hasPrefix("deb-systemd-invoke start") },
            "the socket is stopped or restarted: \(invoked)")
        let restarts = invoked.filter { $0 == "deb-systemd-invoke restart shaked.service" }
        #expect(!restarts.isEmpty, "the daemon is not restarted: \(invoked)")
        #expect(
            !invoked.contains { $0.hasPrefix("deb-systemd-invoke stop") && $0.contains("shaked.service") }, "\(invoked)"
        )
    }

    @Test func installRemoveAndPurgeInAThrowawayRoot() async throws {
        let package = try await DebianPackage.built.value.get()
        let scratch = try Harness.scratch("deb-root")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let root = scratch + "/root"
        for folder in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "etc", "run"] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true)
        }
        for file in ["var/lib/dpkg/status", "etc/passwd", "etc/group"] {
            #expect(FileManager.default.createFile(atPath: "\(root)/\(file)", contents: Data()))
        }
        let hostPasswd = try String(contentsOfFile: "/etc/passwd", encoding: .utf8)
        let before = try DebianPackage.tree(root)

        try await DebianPackage.dpkg(root, ["--install", package])
        let installed = try DebianPackage.tree(root)
        for file in Self.contents where !file.hasPrefix("usr/share/doc") || file.hasSuffix("copyright") {
            #expect(installed.contains(file), "\(file) was not installed")
        }
        // The maintainer scripts did their work in the root: the system user and group, the runtime folder,
        // the socket enabled; the service itself is not enabled (the socket and udev start it).
        let passwd = try String(contentsOfFile: "\(root)/etc/passwd", encoding: .utf8)
        #expect(passwd.contains("shaked:x:"), "no user shaked in \(passwd)")
        #expect(try String(contentsOfFile: "\(root)/etc/group", encoding: .utf8).contains("shaked-admin:x:"))
        #expect(installed.contains("run/shaked/"))
        #expect(installed.contains("etc/systemd/system/sockets.target.wants/shaked.socket"))
        #expect(!installed.contains { $0.hasPrefix("etc/systemd/system/multi-user.target.wants/") })
        #expect(try String(contentsOfFile: "/etc/passwd", encoding: .utf8) == hostPasswd, "the host was touched")

        // A changed configuration survives removal; purge takes it and everything else away.
        try "detector:\n  sensitivity: hard\n".write(
            toFile: "\(root)/etc/shaked/shaked.yaml", atomically: true, encoding: .utf8)
        try await DebianPackage.dpkg(root, ["--remove", "shaked"])
        let removed = try DebianPackage.tree(root)
        #expect(removed.contains("etc/shaked/shaked.yaml"))
        #expect(!removed.contains("usr/sbin/shaked"))

        try await DebianPackage.dpkg(root, ["--purge", "shaked"])
        let purged = try DebianPackage.tree(root)
        // Left: what dpkg keeps of its own, the system user and group (Debian never removes them), and the
        // folders the helpers made.
        let leftover = purged.subtracting(before).filter { path in
            !path.hasPrefix("var/lib/dpkg/") && !path.hasSuffix("/")
                && !["etc/passwd-", "etc/group-", "etc/shadow", "etc/gshadow", "etc/.pwd.lock"].contains(path)
        }
        #expect(leftover.isEmpty, "purge left \(leftover.sorted())")
        #expect(!purged.contains("run/shaked/"))
        #expect(!purged.contains("etc/shaked/"))
    }
}

enum DebianPackage {
    static var toolsPresent: Bool {
        getuid() == 0
            && ["/usr/bin/dpkg-buildpackage", "/usr/bin/dh", "/usr/bin/lintian", "/usr/bin/dpkg-deb"].allSatisfy {
                FileManager.default.isExecutableFile(atPath: $0)
            }
    }

    /// Whether the package is built from this run's (debug) binaries rather than taken from `make deb`.
    static var isPrebuilt: Bool { ProcessInfo.processInfo.environment["SHAKED_DEB"].map(\.isEmpty) ?? true }

    /// The package: `make deb`'s when SHAKED_DEB names it, else built once per test run from this run's binaries,
    /// by a task the first test to ask starts and the others await: a build takes minutes, which no test may spend
    /// holding a thread of Swift's cooperative pool.
    static let built = Task<Result<String, HarnessError>, Never> {
        if let deb = ProcessInfo.processInfo.environment["SHAKED_DEB"], !deb.isEmpty {
            return FileManager.default.fileExists(atPath: deb)
                ? .success(deb) : .failure(HarnessError("SHAKED_DEB names no file: \(deb)"))
        }
        do {
            let out = try Harness.scratch("deb")
            let result = try await Command.run(
                Fixtures.repository.appendingPathComponent("scripts/deb.sh").path, [out],
                environment: [
                    "SHAKED_PREBUILT": Command.productsDirectory.path,
                    "SHAKED_SCRATCH": "\(out)/scratch-unused",
                ])
            guard result.status == 0 else {
                return .failure(HarnessError("scripts/deb.sh failed: \(result.stdout)\(result.stderr)"))
            }
            let files = try FileManager.default.contentsOfDirectory(atPath: out)
            guard let deb = files.first(where: { $0.hasPrefix("shaked_") && $0.hasSuffix(".deb") }) else {
                return .failure(HarnessError("no shaked_*.deb in \(files)"))
            }
            return .success("\(out)/\(deb)")
        } catch {
            return .failure(HarnessError("building the package: \(error)"))
        }
    }

    /// One control field, or the whole control file when `name` is nil.
    static func field(_ package: String, _ name: String?) async throws -> String {
        let result = try await Command.run("/usr/bin/dpkg-deb", ["--field", package] + (name.map { [$0] } ?? []))
        guard result.status == 0 else { throw HarnessError("dpkg-deb --field: \(result.stderr)") }
        return result.stdout
    }

    /// The files and links the package holds, without the leading `./`, sorted.
    static func contents(_ package: String) async throws -> [String] {
        let result = try await Command.run("/usr/bin/dpkg-deb", ["--contents", package])
        guard result.status == 0 else { throw HarnessError("dpkg-deb --contents: \(result.stderr)") }
        return result.stdout.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("d"), let path = line.split(separator: " ").last(where: { $0.hasPrefix("./") })
            else { return nil }
            return String(path.dropFirst(2))
        }.sorted()
    }

    static func extractControl(_ package: String) async throws -> String {
        let directory = try Harness.scratch("deb-control")
        let result = try await Command.run("/usr/bin/dpkg-deb", ["--control", package, directory])
        guard result.status == 0 else { throw HarnessError("dpkg-deb --control: \(result.stderr)") }
        return directory
    }

    static func unpack(_ package: String) async throws -> String {
        let directory = try Harness.scratch("deb-unpacked")
        let result = try await Command.run("/usr/bin/dpkg-deb", ["--extract", package, directory])
        guard result.status == 0 else { throw HarnessError("dpkg-deb --extract: \(result.stderr)") }
        return directory
    }

    /// dpkg on the throwaway root, maintainer scripts run outside a chroot with DPKG_ROOT set (the root has no
    /// shell of its own), dependencies not checked (the root has no other packages).
    static func dpkg(_ root: String, _ arguments: [String]) async throws {
        let result = try await Command.run(
            "/usr/bin/dpkg",
            ["--root=\(root)", "--force-script-chrootless", "--force-depends", "--log=/dev/null"] + arguments,
            environment: ["DPKG_ROOT": root])
        guard result.status == 0 else {
            throw HarnessError("dpkg \(arguments.joined(separator: " ")): \(result.stdout)\(result.stderr)")
        }
    }

    /// Runs maintainer scripts from `control` (each with its arguments, in order) as on a live system: in a mount
    /// namespace of their own, with a /run that holds udev's control socket and systemd's marker, an input device
    /// that is the relay's (the hand-over waits for it), and on PATH recording stand-ins for modprobe, udevadm,
    /// systemctl, shakectl and debhelper's helpers. udevadm answers that an IIO device is handed over to shaked
    /// and that one carries iio-sensor-proxy's type.
    /// - Returns: the commands called, one line each, as `name arguments`.
    static func liveScripts(_ control: String, _ scripts: [(String, [String])]) async throws -> [String] {
        let scratch = try Harness.scratch("deb-live")
        let bin = "\(scratch)/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let log = "\(scratch)/calls"
        let record = "#!/bin/sh\necho \"${0##*/} $*\" >> \(log)\n"
        let stubs: [String: String] = [
            "udevadm": record + """
                case "$*" in
                *--dry-run*SHAKED_OWNS=1*|*--dry-run*IIO_SENSOR_PROXY_TYPE*) echo /sys/devices/virtual/iio:device0 ;;
                esac
                """,
            // A first installation: no unit of the package was installed before.
            "deb-systemd-helper": record + "case \"$*\" in *debian-installed*) exit 1 ;; esac",
            "systemctl": record, "modprobe": record, "deb-systemd-invoke": record, "shakectl": record,
            "systemd-sysusers": record, "systemd-tmpfiles": record, "dpkg-maintscript-helper": record,
        ]
        for (name, text) in stubs {
            try (text + "\nexit 0\n").write(toFile: "\(bin)/\(name)", atomically: true, encoding: .utf8)
            chmod("\(bin)/\(name)", 0o755)
        }
        let runs = scripts.map { script, arguments in
            "sh \(control)/\(script) " + arguments.map { "'\($0)'" }.joined(separator: " ")
        }
        let driver = """
            set -e
            mount -t tmpfs tmpfs /run
            mkdir -p /run/systemd/system /run/udev
            python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("/run/udev/control")'
            mount -t tmpfs tmpfs /sys/class/input
            mkdir /sys/class/input/input99
            echo shaked/accelerometer-relay > /sys/class/input/input99/phys
            export PATH=\(bin):$PATH
            unset DPKG_ROOT
            \(runs.joined(separator: "\n"))
            """
        let result = try await Command.run(
            "/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", driver])
        guard result.status == 0 else { throw HarnessError("live scripts: \(result.stdout)\(result.stderr)") }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// Every path under `root`, relative to it; folders end in `/`.
    static func tree(_ root: String) throws -> Set<String> {
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var paths: Set<String> = []
        while let path = enumerator.nextObject() as? String {
            let type = try FileManager.default.attributesOfItem(atPath: "\(root)/\(path)")[.type] as? FileAttributeType
            paths.insert(type == .typeDirectory ? path + "/" : path)
        }
        return paths
    }
}
