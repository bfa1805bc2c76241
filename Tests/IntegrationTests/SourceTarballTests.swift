// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// `make dist`'s source tarball (scripts/dist.sh): named after debian/changelog's version, holding exactly the files
/// git tracks at the commit, the licence among them, nothing built, with a SHA-256 that checks, and the same bytes
/// when made twice.
@Suite(.enabled(if: SourceTarball.inCheckout, "not a git checkout"))
struct SourceTarballTests {
    @Test func theTarballHoldsTheCommitsFilesUnderTheVersionAndIsReproducible() async throws {
        let scratch = try Harness.scratch("dist")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let repository = Fixtures.repository.path
        let changelog = try String(contentsOfFile: repository + "/debian/changelog", encoding: .utf8)
        let version = try #require(changelog.firstMatch(of: /^shaked \(([^)]+)\)/)?.1)
        let name = "shaked-\(version)"

        // One commit for both tarballs and the listing: HEAD may move while the suite runs (a commit made meanwhile).
        let commit = try await Command.run("/usr/bin/git", ["-C", repository, "rev-parse", "HEAD"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let first = try await Command.run("\(repository)/scripts/dist.sh", ["\(scratch)/a", commit])
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await Command.run("\(repository)/scripts/dist.sh", ["\(scratch)/b", commit])
        #expect(second.status == 0, "\(second.stderr)")
        let tarball = "\(scratch)/a/\(name).tar.gz"
        let bytes = try #require(FileManager.default.contents(atPath: tarball))
        #expect(bytes == FileManager.default.contents(atPath: "\(scratch)/b/\(name).tar.gz"), "not reproducible")

        let listed = try await Command.run("/usr/bin/tar", ["-tzf", tarball]).stdout.split(separator: "\n")
            .map(String.init).filter { !$0.hasSuffix("/") }
        let tracked = try await Command.run("/usr/bin/git", ["-C", repository, "ls-tree", "-r", "--name-only", commit])
            .stdout.split(separator: "\n").map { "\(name)/\($0)" }
        #expect(Set(listed) == Set(tracked))
        for required in ["LICENSE", "NEWS.md", "RELEASING.md", "README.md", "debian/copyright"] {
            #expect(listed.contains("\(name)/\(required)"), "\(required) is missing")
        }
        #expect(!listed.contains { $0.contains("/.build") }, "built files in the tarball")

        let check = try await Command.run(
            "/bin/sh", ["-c", "cd \"$1\" && sha256sum -c \"$2\"", "sh", "\(scratch)/a", "\(name).tar.gz.sha256"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func aCommitThatDoesNotExistIsRefused() async throws {
        let scratch = try Harness.scratch("dist-bad")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let result = try await Command.run("\(Fixtures.repository.path)/scripts/dist.sh", [scratch, "no-such-commit"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("no-such-commit is not a commit"))
    }
}

enum SourceTarball {
    static let inCheckout =
        FileManager.default.fileExists(atPath: Fixtures.repository.path + "/.git")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/git")
}
