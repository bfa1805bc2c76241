// SPDX-License-Identifier: Apache-2.0
import Testing
import UInput

@Suite struct AccelerometerUnitsTests {
    @Test(
        arguments: [
            (9.81, 256), (-9.81, -256), (0, 0), (4.905, 128), (-4.905, -128), (19.62, 512), (0.02, 1), (-0.02, -1),
        ] as [(Double, Int32)])
    func oneGIs256WithTheSameSign(value: Double, units: Int32) {
        #expect(AccelerometerUnits.units(metresPerSecondSquared: value) == units)
    }

    @Test func clampsToTheRangeAndReadsNaNAsZero() {
        #expect(AccelerometerUnits.units(metresPerSecondSquared: 1e9) == 4096)
        #expect(AccelerometerUnits.units(metresPerSecondSquared: -.infinity) == -4096)
        #expect(AccelerometerUnits.units(metresPerSecondSquared: .nan) == 0)
    }

    @Test func inverseIsWithinHalfAUnit() {
        for value in stride(from: -30.0, through: 30.0, by: 0.37) {
            let back = AccelerometerUnits.metresPerSecondSquared(
                units: AccelerometerUnits.units(metresPerSecondSquared: value))
            #expect(abs(back - value) <= 9.81 / 256 / 2 + 1e-9)
        }
    }
}
