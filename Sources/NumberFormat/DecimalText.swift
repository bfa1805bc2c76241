// SPDX-License-Identifier: Apache-2.0
/// Numbers as short decimal text: `2.31`, `7`, `-0.5`, `12.5`.
///
/// The one number formatter of the project: the protocol's JSON, trace files, sysfs values, log metadata and the
/// command line all write numbers through it, so a number reads the same everywhere.
public enum DecimalText {
    /// `value` rounded to at most `decimals` places, without trailing zeros; a whole number without a point.
    ///
    /// Non-finite values are written `nan`, `inf` and `-inf` (callers whose format cannot carry them, such as
    /// JSON, check `isFinite` first). A value so large that scaling it overflows has no decimals to round and is
    /// written as Swift describes it (`1e+308`).
    public static func format(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return nonFinite(value) }
        var scale = 1.0
        for _ in 0..<max(0, decimals) { scale *= 10 }
        guard (value * scale).isFinite else { return String(value) }
        return format((value * scale).rounded() / scale)
    }

    /// `value` exactly: a whole number without a point (`100`), any other as its shortest round-tripping decimal
    /// (`12.5`, `0.002441`).
    public static func format(_ value: Double) -> String {
        guard value.isFinite else { return nonFinite(value) }
        if value == value.rounded(), abs(value) < 1e15 {
            return String(Int64(value))
        }
        return String(value)
    }

    private static func nonFinite(_ value: Double) -> String {
        value.isNaN ? "nan" : value < 0 ? "-inf" : "inf"
    }
}
