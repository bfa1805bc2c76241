// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// `make install-files` and `make uninstall` into a temporary DESTDIR, with the binaries of this test run: where
/// every file lands, the units as systemd reads them, the service's sandbox as `systemd-analyze security` rates
/// it, a locally changed configuration surviving, and an uninstall that leaves nothing behind.
@Suite(.serialized, .enabled(if: InstallHarness.isAvailable, "systemd-analyze, make or unshare is not installed"))
struct SystemdUnitTests {
    /// Every file `make install-files` puts under DESTDIR with the default PREFIX and SYSCONFDIR.
    static let installedFiles = [
        "etc/dbus-1/system.d/io.github.shaked.Shake1.conf",
        "etc/shaked/shaked.yaml",
        "usr/local/bin/shakectl",
        "usr/local/lib/modules-load.d/shaked.conf",
        "usr/local/lib/systemd/system/shaked.service",
        "usr/local/lib/systemd/system/shaked.socket",
        "usr/local/lib/systemd/user/shake-to-undo.service",
        "usr/local/lib/sysusers.d/shaked.conf",
        "usr/local/lib/tmpfiles.d/shaked.conf",
        "usr/local/lib/udev/rules.d/60-shaked.rules",
        "usr/local/lib/udev/rules.d/70-shaked-uinput.rules",
        "usr/local/lib/udev/rules.d/81-shaked-iio-sensor-proxy.rules",
        "usr/local/sbin/shaked",
        "usr/local/share/bash-completion/completions/shakectl",
        "usr/local/share/dbus-1/system-services/io.github.shaked.Shake1.service",
        "usr/local/share/doc/shaked/examples/python/README.md",
        "usr/local/share/doc/shaked/examples/python/shake_dbus.py",
        "usr/local/share/doc/shaked/examples/python/shake_listener.py",
        "usr/local/share/doc/shaked/examples/systemd/shake-to-undo.service",
        "usr/local/share/doc/shaked/protocol.md",
        "usr/local/share/fish/vendor_completions.d/shakectl.fish",
        "usr/local/share/man/man1/shakectl.1",
        "usr/local/share/man/man5/shaked.yaml.5",
        "usr/local/share/man/man8/shaked.8",
        "usr/local/share/zsh/site-functions/_shakectl",
    ]

    @Test func installPutsEveryFileInPlaceWithThePathsFilledIn() async throws {
        let destination = try await InstallHarness.install(name: "layout")
        defer { InstallHarness.remove(destination) }
        #expect(try InstallHarness.files(under: destination) == Self.installedFiles)

        for binary in ["usr/local/bin/shakectl", "usr/local/sbin/shaked"] {
            #expect(FileManager.default.isExecutableFile(atPath: "\(destination)/\(binary)"), "\(binary)")
            let sections = try await Command.run("/usr/bin/readelf", ["-S", "-W", "\(destination)/\(binary)"]).stdout
            #expect(!sections.contains(".symtab") && !sections.contains(".debug_info"), "\(binary) is not stripped")
            let help = try await Command.run("\(destination)/\(binary)", ["--help"])
            #expect(help.status == 0, "\(binary) --help: \(help.stderr)")
        }

        let service = try InstallHarness.read(destination, "usr/local/lib/systemd/system/shaked.service")
        #expect(service.contains("\nExecStart=/usr/local/sbin/shaked --config /etc/shaked/shaked.yaml\n"))
        #expect(service.contains("\nUser=shaked\n"))
        #expect(service.firstMatch(of: /@[A-Z_]+@/) == nil, "a placeholder was left in shaked.service")
        let socket = try InstallHarness.read(destination, "usr/local/lib/systemd/system/shaked.socket")
        #expect(socket.contains("\nListenStream=/run/shaked/shaked.sock\n"))

        let rule = try InstallHarness.read(destination, "usr/local/lib/udev/rules.d/60-shaked.rules")
        #expect(rule.contains(#"TAG+="systemd", ENV{SYSTEMD_WANTS}+="shaked.service""#))
        #expect(rule.contains(#"GROUP="shaked", MODE="0660""#))
        // /dev/uinput for root and the group the service joins only: no user's ACL (no uaccess tag).
        let uinput = try InstallHarness.read(destination, "usr/local/lib/udev/rules.d/70-shaked-uinput.rules")
        let uinputRule = uinput.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        #expect(
            uinputRule == [
                #"KERNEL=="uinput", SUBSYSTEM=="misc", OPTIONS+="static_node=uinput", GROUP="shaked-uinput", MODE="0660""#
            ])
        // The hand-over to iio-sensor-proxy: after its 80- rule, asking the installed shaked which device it owns.
        let handover = try InstallHarness.read(
            destination, "usr/local/lib/udev/rules.d/81-shaked-iio-sensor-proxy.rules")
        #expect(handover.contains(#"IMPORT{program}="/usr/local/sbin/shaked --udev-handover %k""#))
        #expect(handover.contains(#"SUBSYSTEM=="iio", ENV{SHAKED_OWNS}=="1", ENV{IIO_SENSOR_PROXY_TYPE}="""#))
        #expect(handover.contains(#"IMPORT{file}="/run/shaked/accelerometer-relay.properties""#))
        #expect(handover.firstMatch(of: /@[A-Z_]+@/) == nil, "a placeholder was left in the hand-over rule")
        #expect(service.contains("\nSupplementaryGroups=shaked-uinput\n"))
        #expect(service.contains("\nDeviceAllow=/dev/uinput w\n"))
        let sysusers = try InstallHarness.read(destination, "usr/local/lib/sysusers.d/shaked.conf")
        #expect(sysusers.contains("u     shaked "))
        #expect(sysusers.contains("g     shaked-uinput -"))
        let tmpfiles = try InstallHarness.read(destination, "usr/local/lib/tmpfiles.d/shaked.conf")
        #expect(tmpfiles.contains("d /run/shaked 0755 shaked shaked"))
        #expect(service.contains("\nRuntimeDirectory=shaked\n") && service.contains("\nRuntimeDirectoryPreserve=yes\n"))

        let shipped = try InstallHarness.shippedConfiguration()
        #expect(try InstallHarness.read(destination, "etc/shaked/shaked.yaml") == shipped)

        // The D-Bus service: the unit names its bus name and stays Type=notify; only the service user may own
        // the name; activation goes through systemd, as that user.
        #expect(service.contains("\nType=notify\n") && service.contains("\nBusName=io.github.shaked.Shake1\n"))
        let policy = try InstallHarness.read(destination, "etc/dbus-1/system.d/io.github.shaked.Shake1.conf")
        #expect(
            policy.contains(#"<policy user="shaked">"#) && policy.contains(#"<allow own="io.github.shaked.Shake1"/>"#))
        #expect(policy.components(separatedBy: "<allow own=").count == 2, "only one owner may be allowed")
        let activation = try InstallHarness.read(
            destination, "usr/local/share/dbus-1/system-services/io.github.shaked.Shake1.service")
        #expect(activation.contains("\nName=io.github.shaked.Shake1\n"))
        #expect(activation.contains("\nUser=shaked\n") && activation.contains("\nSystemdService=shaked.service\n"))

        // The man pages of man/, each in its own section.
        for (path, page) in [
            ("usr/local/share/man/man8/shaked.8", "shaked.8"), ("usr/local/share/man/man1/shakectl.1", "shakectl.1"),
            ("usr/local/share/man/man5/shaked.yaml.5", "shaked.yaml.5"),
        ] {
            let source = try String(
                contentsOf: Fixtures.repository.appendingPathComponent("man/\(page)"), encoding: .utf8)
            #expect(try InstallHarness.read(destination, path) == source, "\(path)")
        }

        // Completion scripts, one per shell, that know the subcommands.
        for (path, marker) in [
            ("usr/local/share/bash-completion/completions/shakectl", "complete"),
            ("usr/local/share/zsh/site-functions/_shakectl", "#compdef shakectl"),
            ("usr/local/share/fish/vendor_completions.d/shakectl.fish", "complete -c 'shakectl'"),
        ] {
            let script = try InstallHarness.read(destination, path)
            #expect(script.contains(marker), "\(path)")
            #expect(script.contains("simulate-device"), "\(path)")
        }
    }

    /// The installed units pass `systemd-analyze verify` as they are, with the installation's own paths: the
    /// staged /usr/local is mounted over the real one in a private mount namespace, so that the binary named by
    /// ExecStart= and the man pages named by Documentation= are where the units say.
    @Test func theInstalledUnitsVerify() async throws {
        let destination = try await InstallHarness.install(name: "verify")
        defer { InstallHarness.remove(destination) }
        let units = "/usr/local/lib/systemd/system"
        let manual = InstallHarness.hasMan ? "--man=yes" : "--man=no"
        let script = """
            mount --bind "$1/usr/local" /usr/local && \
            MANPATH=/usr/local/share/man:/usr/share/man \
            systemd-analyze verify \(manual) \(units)/shaked.service \(units)/shaked.socket
            """
        var unshare = ["unshare", "--mount", "--propagation", "private"]
        if getuid() != 0 { unshare.append("--map-root-user") }
        let result = try await Command.run("/usr/bin/env", unshare + ["/bin/sh", "-c", script, "sh", destination])
        #expect(result.status == 0, "systemd-analyze verify: \(result.stdout)\(result.stderr)")
        #expect(result.stderr.isEmpty, "systemd-analyze verify complained: \(result.stderr)")
    }

    @Test func theServiceSandboxIsRatedTwoOrLess() async throws {
        let destination = try await InstallHarness.install(name: "security")
        defer { InstallHarness.remove(destination) }
        let result = try await Command.run(
            "/usr/bin/env",
            ["systemd-analyze", "security", "--offline=true", "--no-pager", "--root=\(destination)", "shaked.service"])
        #expect(result.status == 0, "\(result.stderr)")
        let output = result.stdout + result.stderr
        let exposure = try #require(
            InstallHarness.overallExposure(output), "no overall exposure in the output:\n\(output)")
        #expect(exposure <= 2.0, "the sandbox is rated \(exposure):\n\(output)")
    }

    @Test func aChangedConfigurationSurvivesReinstallAndUninstall() async throws {
        let destination = try await InstallHarness.install(name: "config")
        defer { InstallHarness.remove(destination) }
        let config = "\(destination)/etc/shaked/shaked.yaml"
        let changed = try String(contentsOfFile: config, encoding: .utf8) + "logging:\n  level: debug\n"
        try changed.write(toFile: config, atomically: true, encoding: .utf8)

        let again = try await InstallHarness.make("install-files", destination: destination)
        #expect(try String(contentsOfFile: config, encoding: .utf8) == changed)
        // The shipped file goes beside it, to compare with, and the output says so.
        let shipped = try InstallHarness.shippedConfiguration()
        #expect(try String(contentsOfFile: "\(config).default", encoding: .utf8) == shipped)
        #expect(again.contains("shaked.yaml.default"))

        try await InstallHarness.make("uninstall", destination: destination)
        #expect(try InstallHarness.files(under: destination) == ["etc/shaked/shaked.yaml"])
        #expect(try String(contentsOfFile: config, encoding: .utf8) == changed)
    }

    /// On the live system (as root, no DESTDIR), uninstall takes /run/shaked away and makes nothing anew there.
    /// Run in a private mount namespace with its own /run, over an installation staged in a scratch folder.
    @Test(.enabled(if: getuid() == 0)) func aLiveUninstallLeavesNoRuntimeFolder() async throws {
        let destination = try await InstallHarness.install(name: "live-uninstall")
        defer { InstallHarness.remove(destination) }
        let script = """
            mount -t tmpfs tmpfs /run && mkdir /run/shaked && : > /run/shaked/shaked.sock && \
            PREFIX="$1/usr/local" SYSCONFDIR="$1/etc" DESTDIR= BINDIR_BUILD=/nonexistent "$2" uninstall && \
            if [ -e /run/shaked ]; then echo "LEFT /run/shaked"; fi
            """
        let result = try await Command.run(
            "/usr/bin/env",
            [
                "unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", destination,
                Fixtures.repository.appendingPathComponent("scripts/install.sh").path,
            ])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("removed    /run/shaked/"), "\(result.stdout)")
        #expect(!result.stdout.contains("LEFT") && !result.stdout.contains("systemd-tmpfiles"), "\(result.stdout)")
        #expect(try InstallHarness.files(under: destination) == [])
    }

    @Test func uninstallRemovesEverythingInstallPutThere() async throws {
        let destination = try await InstallHarness.install(name: "uninstall")
        defer { InstallHarness.remove(destination) }
        let output = try await InstallHarness.make("uninstall", destination: destination)
        #expect(try InstallHarness.files(under: destination) == [])
        #expect(!FileManager.default.fileExists(atPath: "\(destination)/etc/shaked"))
        for file in Self.installedFiles {
            #expect(output.contains("\(destination)/\(file)"), "uninstall did not report \(file)")
        }
    }
}

/// Runs the Makefile's install targets for the tests.
enum InstallHarness {
    static let repository = Fixtures.repository

    static func which(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") + ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] {
            let candidate = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    static var isAvailable: Bool {
        which("systemd-analyze") != nil && which("make") != nil && which("unshare") != nil
    }

    static var hasMan: Bool { which("man") != nil }

    /// Runs `make TARGET` on the test run's own binaries into `destination`. - Returns: what it printed.
    @discardableResult
    static func make(_ target: String, destination: String) async throws -> String {
        let result = try await Command.run(
            "/usr/bin/env",
            [
                "make", "--no-print-directory", "-C", repository.path, target, "DESTDIR=\(destination)",
                "BINDIR_BUILD=\(Command.productsDirectory.path)", "GENERATED_DIR=\(destination)/../generated",
            ])
        guard result.status == 0 else {
            throw HarnessError("make \(target) failed (\(result.status)): \(result.stdout)\(result.stderr)")
        }
        return result.stdout
    }

    /// A new DESTDIR with a fresh installation in it.
    static func install(name: String) async throws -> String {
        let destination = try Harness.scratch("install-\(name)") + "/root"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        try await make("install-files", destination: destination)
        return destination
    }

    /// Removes a DESTDIR made by ``install(name:)``, with the generated files beside it.
    static func remove(_ destination: String) {
        try? FileManager.default.removeItem(atPath: (destination as NSString).deletingLastPathComponent)
    }

    static func shippedConfiguration() throws -> String {
        try String(contentsOf: repository.appendingPathComponent("config/shaked.yaml"), encoding: .utf8)
    }

    static func read(_ destination: String, _ path: String) throws -> String {
        try String(contentsOfFile: "\(destination)/\(path)", encoding: .utf8)
    }

    /// The files and symbolic links under `directory`, relative to it, sorted; folders are left out.
    static func files(under directory: String) throws -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
        var found: [String] = []
        while let path = enumerator.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(atPath: "\(directory)/\(path)")
            if attributes[.type] as? FileAttributeType != .typeDirectory { found.append(path) }
        }
        return found.sorted()
    }

    /// The number in `→ Overall exposure level for shaked.service: 0.7 SAFE`.
    static func overallExposure(_ output: String) -> Double? {
        guard let line = output.split(separator: "\n").first(where: { $0.contains("Overall exposure level") }),
            let value = line.split(separator: ":").last?.split(separator: " ").first
        else { return nil }
        return Double(value)
    }
}
