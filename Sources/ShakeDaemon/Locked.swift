// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// A value shared between the daemon's threads, behind a lock; a reference, so closures can hold it.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { body(&$0) }
    }
}
