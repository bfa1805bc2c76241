// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import ShakeConfig
import ShakeDetection

/// `--sensitivity` and `--config`, for the commands that run the detector.
struct DetectorOptions: ParsableArguments {
    @Option(help: "Sensitivity preset: light, medium (default) or hard.")
    var sensitivity: DetectorSettings.Sensitivity?

    @Option(help: "Configuration file whose 'detector' section adjusts the settings.")
    var config: String?

    /// The settings, and a name for them (`medium`, `hard + my.yaml`); a bad file or value exits with 64.
    func resolve() throws -> (settings: DetectorSettings, name: String) {
        do {
            let (settings, preset) = try ConfigLoader.detectorSettings(configPath: config, sensitivity: sensitivity)
            return (settings, preset.rawValue + (config.map { " + \($0)" } ?? ""))
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode(64)
        }
    }
}
