// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import IIOModel
import IIOSensor
import Logging
import ShakeConfig
import ShakeDaemon

extension Shaked {
    /// `--udev-handover iio:deviceN`, for the hand-over rule (81-shaked-iio-sensor-proxy.rules): prints
    /// `SHAKED_OWNS=1` when shaked, as configured, would capture from that device and relay it to
    /// iio-sensor-proxy; then the rule clears the device's `IIO_SENSOR_PROXY_TYPE`, and iio-sensor-proxy takes the
    /// relay's input device instead. Prints nothing otherwise (a configuration that does not validate, a relay
    /// that is off, another sensor chosen), so iio-sensor-proxy keeps the device.
    ///
    /// The accounts the files name are not looked up (``AccountResolver/unchecked``): the hand-over needs none,
    /// and with sssd or LDAP a lookup could hold the udev event for as long as the directory takes to answer. A
    /// file whose only fault is an account that does not exist is therefore taken here, though the daemon
    /// refuses to start with it (and says so in its log). The files are read as the daemon reads them: regular
    /// files only, opened without blocking, trusted only when root (or the reading user) alone could write them.
    func handoverProperties(device: String) -> String {
        guard let configuration = try? effectiveConfiguration(path: configPath, accounts: .unchecked),
            case .iio(uri: nil) = configuration.sensor.source,
            IIOSensorProxy.relays(
                configuration.sensor.relay,
                installed: IIOSensorProxy.isInstalled(fileExists: { FileManager.default.fileExists(atPath: $0) }))
        else { return "" }
        let request = configuration.sensor.device
        let source = SensorSource(
            backend: LibIIOBackend(uri: nil), configuration: .init(request: request),
            logger: Logger(label: "shaked.udev-handover", factory: { _ in SwiftLogNoOpLogHandler() }))
        guard source.peek()?.id == device else { return "" }
        return "SHAKED_OWNS=1\n"
    }
}
