// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import ShakeDetection
import ShakeProtocol
import ShakeServer

/// What the daemon reports about itself: the sensor in use, whether a shake is under way, the detector's counters,
/// the sensitivity in force and the reloads; read for `hello` and `status` on the socket and for the properties of
/// the shake object on D-Bus. The source's thread and the reload write it; the server's loop and the bus thread
/// read it.
final class StatusBoard: Sendable {
    struct Values: Sendable {
        var sensor = SensorState.none
        var shaking = false
        var counters = ShakeDetector.Counters()
        var sensitivity: DetectorSettings.Sensitivity
        var reloads = 0
        var rejectedReloads = 0

        /// The bus object's properties now.
        var busProperties: BusProperties {
            BusProperties(sensor: sensor, shaking: shaking, sensitivity: sensitivity)
        }
    }

    private let values: Locked<Values>
    /// Told after a change that the bus's properties may show: the bus, when there is one (set before the
    /// services run).
    private let observer = Locked<(@Sendable () -> Void)?>(nil)

    init(sensitivity: DetectorSettings.Sensitivity, sensor: SensorState = .none) {
        values = Locked(Values(sensor: sensor, sensitivity: sensitivity))
    }

    var current: Values { values.withLock { $0 } }

    /// Changes the values without telling the observer (counters, which change with every sample).
    @discardableResult
    func update<Result>(_ body: (inout Values) -> Result) -> Result {
        values.withLock(body)
    }

    /// Changes the values and tells the observer.
    @discardableResult
    func change<Result>(_ body: (inout Values) -> Result) -> Result {
        defer { changed() }
        return values.withLock(body)
    }

    /// Tells the observer that the values changed.
    func changed() {
        observer.withLock { $0 }?()
    }

    func observe(_ body: @escaping @Sendable () -> Void) {
        observer.withLock { $0 = body }
    }

    /// The daemon's side of the server's `hello` and `status`.
    var serverStatus: ShakeServer.DaemonStatus {
        let state = current
        let counters = state.counters
        return .init(
            sensor: state.sensor.info, shaking: state.shaking,
            counters: [
                "samples": counters.samples, "invalid_samples": counters.invalid,
                "discontinuities": counters.discontinuities, "began": counters.began,
                "ended": counters.ended, "cancelled": counters.cancelled,
                "config_reloads": state.reloads, "config_reloads_rejected": state.rejectedReloads,
            ])
    }
}

/// The status follows the live stream's events: whether a shake is under way, and the detector's counters.
extension StatusBoard: EventConsumer {
    func consume(_ event: PublishedEvent) {
        guard case .live(let live) = event.origin else { return }
        update { state in
            state.shaking = live.shaking
            state.counters = live.counters
        }
    }
}
