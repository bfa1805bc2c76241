// SPDX-License-Identifier: Apache-2.0
/// udev's properties of a device, as its database (`/run/udev/data/c<major>:<minor>`, lines `E:KEY=VALUE`) or a
/// sysfs `uevent` file (lines `KEY=VALUE`) spell them. systemd's hwdb puts `ACCEL_MOUNT_MATRIX` and
/// `ACCEL_LOCATION` there.
public enum UdevProperties {
    /// Parses either format; other lines (`S:`, `I:`, `G:`) are ignored.
    public static func parse(_ text: String) -> [String: String] {
        var properties: [String: String] = [:]
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            var entry = Substring(line)
            if entry.hasPrefix("E:") {
                entry = entry.dropFirst(2)
            } else if entry.count > 1, entry[entry.index(after: entry.startIndex)] == ":" {
                continue
            }
            guard let equals = entry.firstIndex(of: "=") else { continue }
            let key = entry[..<equals].trimmingWhitespace()
            guard !key.isEmpty else { continue }
            properties[key] = entry[entry.index(after: equals)...].trimmingWhitespace()
        }
        return properties
    }

    /// The `major:minor` of a sysfs `dev` file.
    public static func deviceNumber(_ text: String) -> (major: Int, minor: Int)? {
        let parts = text.trimmingWhitespace().split(separator: ":")
        guard parts.count == 2, let major = Int(parts[0]), let minor = Int(parts[1]) else { return nil }
        return (major, minor)
    }
}
