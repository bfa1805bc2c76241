// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Synchronization
import Testing

@testable import ShakeConfig

/// What may stand where a configuration file is expected: a regular file only, opened without waiting on it, and
/// only one that nobody but root (or the user reading it) could have written or replaced.
struct ConfigFileTrustTests {
    func write(_ text: String, to path: String, mode: mode_t = 0o644) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, mode) == 0)
    }

    /// Runs `load` on a thread of its own. A loader that waits on a FIFO would hang the test: past a generous
    /// 10 s, the FIFOs are opened for writing and closed, which lets it go on (it then reads an empty file), and
    /// the test fails.
    func loadWithoutWaiting<Result: Sendable>(
        fifos: [String], _ load: @escaping @Sendable () -> Result
    ) -> Result {
        let result = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let value = load()
            result.withLock { $0 = value }
            done.signal()
        }.start()
        if done.wait(timeout: .now() + 10) == .timedOut {
            Issue.record("the loader waited on a FIFO")
            for fifo in fifos {
                let descriptor = open(fifo, O_WRONLY | O_NONBLOCK)
                if descriptor >= 0 { close(descriptor) }
            }
            done.wait()
        }
        return result.withLock { $0! }
    }

    @Test func aFIFOAsTheMainFileIsRefusedWithoutWaiting() throws {
        let fifo = try Scratch.directory("trust-fifo") + "/shaked.yaml"
        #expect(mkfifo(fifo, 0o644) == 0)
        let outcome = loadWithoutWaiting(fifos: [fifo]) { () -> String in
            do {
                _ = try ConfigLoader.load(path: fifo)
                return "accepted"
            } catch let error as ConfigError {
                return error.description
            } catch {
                return "\(error)"
            }
        }
        #expect(outcome == "\(fifo): is a FIFO, not a regular file; a configuration file must be a regular file")
    }

    @Test func aFIFOAsADropInIsRefusedWithoutWaitingAndNamed() throws {
        let directory = try Scratch.directory("trust-fifo-drop-in")
        let main = "\(directory)/shaked.yaml"
        try write("detector:\n  threshold: 14\n", to: main)
        #expect(mkdir(main + ".d", 0o755) == 0)
        try write("detector:\n  reversals: 3\n", to: main + ".d/10-good.yaml")
        let fifo = main + ".d/20-fifo.yaml"
        #expect(mkfifo(fifo, 0o644) == 0)
        let dropIns = ConfigLoader.dropIns(for: main, vendor: "\(directory)/none")
        #expect(dropIns == [main + ".d/10-good.yaml", fifo])
        let outcome = loadWithoutWaiting(fifos: [fifo]) { () -> [String] in
            do {
                _ = try ConfigLoader.loadLayered(main: main, dropIns: dropIns)
                return []
            } catch let error as ConfigErrors {
                return error.errors.map(\.description)
            } catch {
                return ["\(error)"]
            }
        }
        #expect(outcome == ["\(fifo): is a FIFO, not a regular file; a configuration file must be a regular file"])
    }

    @Test func aDeviceOrAFolderIsRefused() throws {
        #expect(throws: ConfigError(file: "/dev/null", message: FileTrust.notRegular("a character device"))) {
            try ConfigLoader.load(path: "/dev/null")
        }
        let folder = try Scratch.directory("trust-folder") + "/x.yaml"
        #expect(mkdir(folder, 0o755) == 0)
        #expect(throws: ConfigError(file: folder, message: FileTrust.notRegular("a directory"))) {
            try ConfigLoader.load(path: folder)
        }
    }

    @Test(arguments: [
        (0o666 as mode_t, "its group and others"), (0o664, "its group"), (0o646, "others"), (0o660, "its group"),
    ])
    func aFileOthersMayWriteIsRefused(mode: mode_t, writers: String) throws {
        let path = try Scratch.directory("trust-mode") + "/shaked.yaml"
        try write("detector:\n  threshold: 14\n", to: path, mode: mode)
        #expect {
            try ConfigLoader.load(path: path)
        } throws: { error in
            let description = (error as? ConfigError)?.description ?? ""
            return description.hasPrefix("\(path): is writable by \(writers) (mode 0\(String(mode, radix: 8)));")
                && description.contains("chmod go-w")
        }
        // Writable by its owner alone, and readable by anyone or no one: taken.
        for mode: mode_t in [0o644, 0o600, 0o400] {
            #expect(chmod(path, mode) == 0)
            #expect(try ConfigLoader.load(path: path).detector.overrides[.threshold] == 14)
        }
    }

    @Test func aFolderOthersMayWriteIsRefusedUnlessSticky() throws {
        let directory = try Scratch.directory("trust-folder-mode")
        let path = "\(directory)/shaked.yaml"
        try write("detector:\n  threshold: 14\n", to: path)
        #expect(chmod(directory, 0o777) == 0)
        #expect {
            try ConfigLoader.load(path: path)
        } throws: { error in
            (error as? ConfigError)?.description.hasPrefix(
                "\(path): is in \(directory), which is writable by its group and others (mode 0777)") == true
        }
        // Sticky, as /tmp is: only a file's owner may rename or remove it there.
        #expect(chmod(directory, 0o1777) == 0)
        #expect(try ConfigLoader.load(path: path).detector.overrides[.threshold] == 14)
        #expect(chmod(directory, 0o755) == 0)
    }

    /// A link in a safe folder to a file in one that others may write: the file's own folder counts too.
    @Test func aLinkToAFileInAFolderOthersMayWriteIsRefused() throws {
        let directory = try Scratch.directory("trust-link")
        #expect(mkdir("\(directory)/open", 0o755) == 0)
        #expect(chmod("\(directory)/open", 0o777) == 0)
        try write("detector:\n  threshold: 14\n", to: "\(directory)/open/real.yaml")
        #expect(symlink("\(directory)/open/real.yaml", "\(directory)/shaked.yaml") == 0)
        #expect {
            try ConfigLoader.load(path: "\(directory)/shaked.yaml")
        } throws: { error in
            (error as? ConfigError)?.message.hasPrefix("is in \(directory)/open, which is writable by") == true
        }
        #expect(chmod("\(directory)/open", 0o755) == 0)
        #expect(try ConfigLoader.load(path: "\(directory)/shaked.yaml").detector.overrides[.threshold] == 14)
    }

    /// Root reading a file that another user owns, or that lies in another user's folder: that user could have
    /// written it.
    @Test(.enabled(if: getuid() == 0, "needs root to give a file away"))
    func aFileOrFolderOfAnotherUserIsRefusedByRoot() throws {
        let directory = try Scratch.directory("trust-owner")
        let path = "\(directory)/shaked.yaml"
        try write("detector:\n  threshold: 14\n", to: path)
        #expect(chown(path, 65534, 65534) == 0)
        #expect(
            throws: ConfigError(
                file: path, message: FileTrust.problem(file: .init(mode: 0o100644, owner: 65534), user: 0)!)
        ) {
            try ConfigLoader.load(path: path)
        }
        #expect(chown(path, 0, 0) == 0)
        #expect(chown(directory, 65534, 65534) == 0)
        #expect {
            try ConfigLoader.load(path: path)
        } throws: { error in
            (error as? ConfigError)?.message == "is in \(directory), which is owned by uid 65534; the folders above a "
                + "configuration file must belong to root"
        }
        #expect(chown(directory, 0, 0) == 0)
    }

    /// The rules on the numbers alone, for any reader.
    @Test func theRulesOnOwnerAndMode() {
        let regular = UInt32(S_IFREG)
        let folder = UInt32(S_IFDIR)
        // Root's file, and the reader's own.
        #expect(FileTrust.problem(file: .init(mode: regular | 0o644, owner: 0), user: 1000) == nil)
        #expect(FileTrust.problem(file: .init(mode: regular | 0o600, owner: 1000), user: 1000) == nil)
        #expect(
            FileTrust.problem(file: .init(mode: regular | 0o644, owner: 1001), user: 1000)
                == "is owned by uid 1001; a configuration file must belong to root or to the user reading it (uid 1000)"
        )
        #expect(FileTrust.problem(file: .init(mode: regular | 0o644, owner: 1000), user: 0) != nil)
        #expect(
            FileTrust.problem(file: .init(mode: UInt32(S_IFIFO) | 0o644, owner: 0), user: 0)
                == FileTrust.notRegular("a FIFO"))
        #expect(FileTrust.problem(folder: "/etc", .init(mode: folder | 0o755, owner: 0), user: 1000) == nil)
        #expect(FileTrust.problem(folder: "/tmp", .init(mode: folder | 0o1777, owner: 0), user: 1000) == nil)
        #expect(FileTrust.problem(folder: "/srv", .init(mode: folder | 0o775, owner: 0), user: 0) != nil)
        #expect(FileTrust.problem(folder: "/home/a", .init(mode: folder | 0o755, owner: 1000), user: 1000) == nil)
        #expect(FileTrust.problem(folder: "/home/a", .init(mode: folder | 0o755, owner: 1000), user: 0) != nil)
        #expect(FileTrust.ancestors(of: "/a/b/") == ["/", "/a", "/a/b"])
        #expect(FileTrust.parent(of: "/x") == "/")
        #expect(FileTrust.parent(of: "/etc/shaked/shaked.yaml") == "/etc/shaked")
    }
}
