// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Folders for tests to write in, all inside one folder of the test process's own, which is removed when the
/// process exits: a run of the suite leaves nothing behind in the temporary folder. Set `SHAKED_KEEP_SCRATCH=1`
/// to keep it (its path is printed) and read what a failing test left. The process's umask becomes 022 at first
/// use.
public enum Scratch {
    /// The test process's folder, created (readable by all: a test may call the daemon as another user) on first
    /// use, when its removal at exit is arranged.
    public static let root: String = {
        // Files the tests write are writable by their owner alone, whatever the user's umask (002 is common):
        // shaked refuses a configuration file that others may write.
        umask(0o022)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("shaked-tests-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        chmod(root, 0o755)
        if ProcessInfo.processInfo.environment["SHAKED_KEEP_SCRATCH"] == nil {
            atexit { try? FileManager.default.removeItem(atPath: Scratch.root) }
        } else {
            FileHandle.standardError.write(Data("tests: scratch folders kept in \(root)\n".utf8))
        }
        return root
    }()

    /// A new, empty folder named after `name` (made unique) inside ``root``, readable by all.
    public static func directory(_ name: String) throws -> String {
        let directory = "\(root)/\(name)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        return directory
    }
}
