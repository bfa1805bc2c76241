// SPDX-License-Identifier: Apache-2.0
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The few plain file reads the backend needs (sysfs and udev's database).
enum SystemFiles {
    static func read(_ path: String) -> String? {
        guard let file = try? FileDescriptor.open(path, .readOnly, options: .closeOnExec) else { return nil }
        defer { try? file.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while let count = try? chunk.withUnsafeMutableBytes({ try file.read(into: $0) }), count > 0 {
            bytes += chunk[0..<count]
            if bytes.count > 1 << 20 { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes a sysfs attribute in one write(2). - Returns: 0, or the errno.
    static func write(_ path: String, _ value: String) -> Int32 {
        do {
            let file = try FileDescriptor.open(path, .writeOnly, options: .closeOnExec)
            defer { try? file.close() }
            _ = try Array(value.utf8).withUnsafeBytes { try file.write($0) }
            return 0
        } catch {
            return (error as? Errno)?.rawValue ?? EIO
        }
    }

    static func list(_ path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
