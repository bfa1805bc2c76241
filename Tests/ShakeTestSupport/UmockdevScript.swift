// SPDX-License-Identifier: Apache-2.0

/// What an umockdev script (`shakectl simulate-device`'s `iio:deviceN.script`) says the device's node delivers.
public enum UmockdevScript {
    /// The script's reads, in order: each `r DELAY BYTES` line's delay (ms) and its bytes, unescaped (`^` + (byte +
    /// 64) for a byte below 32, ``^` `` for `^`).
    public static func reads(_ script: [UInt8]) -> [(delay: Int, bytes: [UInt8])] {
        script.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard line.first == UInt8(ascii: "r") else { return nil }
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, let delay = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
            var bytes: [UInt8] = []
            var escaped = false
            for byte in fields[2] {
                if escaped {
                    bytes.append(byte == UInt8(ascii: "`") ? UInt8(ascii: "^") : byte - 64)
                    escaped = false
                } else if byte == UInt8(ascii: "^") {
                    escaped = true
                } else {
                    bytes.append(byte)
                }
            }
            return (delay, bytes)
        }
    }
}
