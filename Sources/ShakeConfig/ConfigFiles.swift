// SPDX-License-Identifier: Apache-2.0
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The few file operations the configuration needs, straight on the C library: whether a path exists, the names
/// in a folder, and a bounded read of a file that may be trusted.
enum ConfigFiles {
    /// Whether something exists at `path` (a symbolic link counts by what it points to).
    static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }

    /// The names in a folder (without `.` and `..`), or nil when it cannot be listed.
    static func names(in directory: String) -> [String]? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Reads at most `limit + 1` bytes of `path`, so that a caller can tell a file over the limit without reading
    /// it whole, after checking that the file may be trusted (``FileTrust``): a regular file (opened without
    /// blocking, so that a FIFO is refused rather than waited on), owned by root or by the user reading it,
    /// writable by its owner alone, in folders that only root or that user may change.
    /// - Throws: the `errno` of the failing call, or why the file is not trusted.
    static func read(_ path: String, upTo limit: Int) throws(Failure) -> [UInt8] {
        // Something other than a regular file is not even opened: opening a device can act (a watchdog starts,
        // a tape rewinds). What is opened is checked again below, on its descriptor.
        var named = stat()
        if stat(path, &named) == 0, let problem = FileTrust.typeProblem(FileTrust.Status(named)) {
            throw .untrusted(problem)
        }
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, for ever.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { throw .system(errno: errno) }
        defer { close(descriptor) }
        // What was opened, not what the path named a moment before: fstat on the descriptor.
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .system(errno: errno) }
        let file = FileTrust.Status(status)
        let user = geteuid()
        if let problem = FileTrust.problem(file: file, user: user) { throw .untrusted(problem) }
        for directory in folders(of: path) {
            var status = stat()
            guard stat(directory, &status) == 0 else { throw .system(errno: errno) }
            if let problem = FileTrust.problem(folder: directory, FileTrust.Status(status), user: user) {
                throw .untrusted(problem)
            }
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count <= limit {
            let wanted = min(chunk.count, limit + 1 - bytes.count)
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes {
                    try FileDescriptor(rawValue: descriptor).read(
                        into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted]))
                }
            } catch {
                throw .system(errno: (error as? Errno)?.rawValue ?? EIO)
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return bytes
    }

    /// Every folder whose owner could replace the file at `path`: the folders from the root down to the one the
    /// file is in, both as `path` names them (symbolic links in it resolved) and where the file really lives
    /// (when `path` is itself a link).
    static func folders(of path: String) -> [String] {
        var result: [String] = []
        func add(_ directory: String) {
            for folder in FileTrust.ancestors(of: directory) where !result.contains(folder) { result.append(folder) }
        }
        let named = FileTrust.parent(of: path)
        add(resolved(named) ?? named)
        if let target = resolved(path) { add(FileTrust.parent(of: target)) }
        return result
    }

    /// The absolute path with every symbolic link resolved, or nil when it cannot be resolved.
    private static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    enum Failure: Error {
        case system(errno: Int32)
        /// Why the file may not be trusted, as a sentence about the file.
        case untrusted(String)
    }
}

/// Whether a configuration file may be trusted, as sshd and sudo judge theirs: pure, on the numbers `fstat` and
/// `stat` give. A configuration decides who may stream raw motion and where the socket goes, so it must be a
/// regular file that no one but root (or the user reading it) could have written or replaced.
enum FileTrust {
    /// What the checks need of a file's status.
    struct Status: Sendable, Hashable {
        var mode: UInt32
        var owner: UInt32

        init(mode: UInt32, owner: UInt32) {
            self.mode = mode
            self.owner = owner
        }

        init(_ status: stat) {
            self.init(mode: UInt32(status.st_mode), owner: UInt32(status.st_uid))
        }

        var type: UInt32 { mode & UInt32(S_IFMT) }
        var permissions: UInt32 { mode & 0o7777 }
    }

    /// Why the file itself may not be trusted by `user` (the effective uid reading it), or nil.
    static func problem(file: Status, user: UInt32) -> String? {
        if let problem = typeProblem(file) { return problem }
        if file.owner != 0 && file.owner != user {
            return "is owned by uid \(file.owner); a configuration file must belong to root"
                + (user == 0 ? "" : " or to the user reading it (uid \(user))")
        }
        if file.permissions & 0o022 != 0 {
            return "is writable by \(writers(file.permissions)) (mode \(octal(file.permissions))); "
                + "a configuration file must be writable by its owner alone (chmod go-w)"
        }
        return nil
    }

    /// Why the file is not a regular file, or nil when it is.
    static func typeProblem(_ file: Status) -> String? {
        file.type == UInt32(S_IFREG) ? nil : notRegular(kind(file.type))
    }

    static func notRegular(_ kind: String) -> String {
        "is \(kind), not a regular file; a configuration file must be a regular file"
    }

    /// Why a folder above the file makes the file untrusted, or nil: another user could rename or replace what
    /// it holds unless the folder is theirs alone, or sticky (as /tmp, where only a file's owner may replace it).
    static func problem(folder: String, _ status: Status, user: UInt32) -> String? {
        if status.owner != 0 && status.owner != user {
            return "is in \(folder), which is owned by uid \(status.owner); the folders above a configuration "
                + "file must belong to root" + (user == 0 ? "" : " or to the user reading it (uid \(user))")
        }
        if status.permissions & 0o022 != 0 && status.permissions & UInt32(S_ISVTX) == 0 {
            return "is in \(folder), which is writable by \(writers(status.permissions)) (mode "
                + "\(octal(status.permissions))): anyone who may write there could replace the file; make it "
                + "writable by its owner alone (chmod go-w)"
        }
        return nil
    }

    /// The folder a path is in: what comes before its last slash (`/` for `/x`), made absolute.
    static func parent(of path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        guard let slash = absolute.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "/" }
        return slash == absolute.startIndex ? "/" : String(absolute[..<slash])
    }

    /// `/`, `/a`, `/a/b` for `/a/b` (a trailing slash and empty parts ignored).
    static func ancestors(of directory: String) -> [String] {
        var result = ["/"]
        var path = ""
        for part in directory.split(separator: "/") {
            path += "/" + part
            result.append(path)
        }
        return result
    }

    private static func currentDirectory() -> String {
        guard let pointer = getcwd(nil, 0) else { return "" }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    private static func kind(_ type: UInt32) -> String {
        switch type {
        case UInt32(S_IFIFO): "a FIFO"
        case UInt32(S_IFDIR): "a directory"
        case UInt32(S_IFCHR): "a character device"
        case UInt32(S_IFBLK): "a block device"
        case UInt32(S_IFSOCK): "a socket"
        default: "of another kind"
        }
    }

    private static func writers(_ permissions: UInt32) -> String {
        switch (permissions & 0o020 != 0, permissions & 0o002 != 0) {
        case (true, true): "its group and others"
        case (true, false): "its group"
        default: "others"
        }
    }

    private static func octal(_ permissions: UInt32) -> String { "0" + String(permissions, radix: 8) }
}
