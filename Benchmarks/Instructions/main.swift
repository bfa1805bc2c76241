// SPDX-License-Identifier: Apache-2.0
// Feeds a trace (CSV `time,x,y,z` on standard input) through `ShakeDetector.process`, for
// Benchmarks/instructions.sh to count the instructions it takes under callgrind. Deliberately without
// Foundation: this valgrind cannot follow libdispatch's threads.
import ShakeDetection

var samples: [Sample] = []
while let line = readLine() {
    let fields = line.split(separator: ",")
    guard fields.count == 4, let time = Double(fields[0]), let x = Double(fields[1]), let y = Double(fields[2]),
        let z = Double(fields[3])
    else { continue }
    samples.append(Sample(time: time, x: x, y: y, z: z))
}
var detector = ShakeDetector()
var events = 0
for sample in samples where detector.process(sample) != nil {
    events += 1
}
print("\(samples.count) samples, \(events) events")
