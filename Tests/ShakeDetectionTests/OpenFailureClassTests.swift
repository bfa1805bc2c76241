// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeDetection
import ShakeTestSupport
import ShakeTrace
import Testing

/// Shakes that recordings the project has not seen lose at `medium`, and that the detector still loses: each
/// a known issue, so that the test fails (and the issue is removed) when a change takes them.
/// docs/detection.md, "Where it stands", says what each costs and what was tried.
struct OpenFailureClassTests {
}
