// SPDX-License-Identifier: Apache-2.0
/// The version of shaked, its tools and its Swift libraries, as `--version` prints it. debian/changelog's newest
/// entry carries the same number (a test holds them together).
public enum ShakedVersion {
    public static let current = "0.3.0"
}
