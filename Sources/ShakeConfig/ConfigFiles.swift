#if canImport(Glibc)
    import Glibc
#endif

/// The few file operations the configuration needs, straight on the C library: a bounded read, whether a path
/// exists, the names in a folder.
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
    /// it whole (a FIFO or a huge file must not cost the daemon its memory).
    /// - Throws: the `errno` of the failing call.
    static func read(_ path: String, upTo limit: Int) throws(Failure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(errno: errno) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count <= limit {
            let wanted = min(chunk.count, limit + 1 - bytes.count)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(errno: errno)
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return bytes
    }

    struct Failure: Error {
        var errno: Int32
    }
}
