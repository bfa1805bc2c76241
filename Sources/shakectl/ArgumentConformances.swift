// SPDX-License-Identifier: Apache-2.0
public import ArgumentParser
public import ShakeDetection
public import ShakeTrace

// The enums of the libraries, as command-line values (their raw values are the spellings).
extension DetectorSettings.Sensitivity: ExpressibleByArgument {}
extension SynthesisOptions.Motion: ExpressibleByArgument {}
extension SynthesisOptions.Direction: ExpressibleByArgument {}
extension SynthesisOptions.Move: ExpressibleByArgument {}
extension SynthesisOptions.Interpolation: ExpressibleByArgument {}
extension SynthesisOptions.Background: ExpressibleByArgument {}
extension SynthesisOptions.Placement: ExpressibleByArgument {}
extension SynthesisOptions.Orientation: ExpressibleByArgument {}
