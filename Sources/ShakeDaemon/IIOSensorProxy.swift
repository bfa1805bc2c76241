// SPDX-License-Identifier: Apache-2.0
public import ShakeConfig

/// iio-sensor-proxy, the accelerometer's other user on GNOME, Phosh and Plasma: whether it is installed, and so
/// whether `sensor.relay: auto` relays.
public enum IIOSensorProxy {
    /// Its udev rule, which makes it take accelerometers: where distributions install it.
    public static let ruleFiles = [
        "/usr/lib/udev/rules.d/80-iio-sensor-proxy.rules", "/lib/udev/rules.d/80-iio-sensor-proxy.rules",
        "/etc/udev/rules.d/80-iio-sensor-proxy.rules",
    ]

    /// Whether its udev rule is present.
    public static func isInstalled(fileExists: (String) -> Bool) -> Bool {
        ruleFiles.contains(where: fileExists)
    }

    /// Whether the relay runs for an IIO source under this setting.
    public static func relays(
        _ setting: ShakedConfiguration.SensorSection.Relay, installed: @autoclosure () -> Bool
    ) -> Bool {
        switch setting {
        case .on: true
        case .off: false
        case .auto: installed()
        }
    }
}
