// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection
import ShakeProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Draws a trace as the detector saw it, as an SVG picture: what a person tuning a sensitivity wants to see.
///
/// The upper panel shows the gravity-free magnitude (a wide grey band, so that it stays visible under the
/// stroke) and the part that counts towards strokes (blue, with its downward part limited to what exceeds free
/// fall), against the threshold (purple, dashed: no axis is purple) and half of it (the duty level, dotted). Each
/// reversal is marked on the stroke: a filled circle once it counts (the next stroke swung back), a hollow one
/// while it waits for that, a brown cross with the failed test when it was rejected. The lower panel shows the
/// three gravity-free axes. Shakes that ended are shaded blue from `began` to `ended`; `began` is a green line,
/// `ended` blue, `cancelled` orange with its reason and detail. A labelled interval, when given, is shaded
/// yellow behind everything.
public struct TracePlot: Sendable {
    public var title: String
    public var settings: DetectorSettings
    /// A labelled interval to shade (the ground truth), in the trace's seconds.
    public var label: (start: Double, end: Double)?
    public var width = 1200.0
    public var height = 640.0

    public init(title: String, settings: DetectorSettings, label: (start: Double, end: Double)? = nil) {
        self.title = title
        self.settings = settings
        self.label = label
    }

    /// What the detector saw and decided.
    public struct Run: Sendable {
        public var times: [Double] = []
        public var linear: [Vector3] = []
        public var stroke: [Double] = []
        /// The reversal each sample made, if any (parallel to `times`).
        public var reversals: [ShakeDetector.Reversal?] = []
        public var events: [ShakeEvent] = []
        /// The index in `times` of the sample that decided each event.
        public var eventIndices: [Int] = []
    }

    static let thresholdColor = "#9467bd"
    static let rejectedColor = "#8c564b"

    /// Runs the detector over samples, keeping what it saw.
    public func run(_ samples: [Sample]) -> Run {
        var detector = ShakeDetector(settings: settings)
        var run = Run()
        for sample in samples {
            let event = detector.process(sample)
            if sample.isUsable {
                let observation = detector.lastObservation
                run.times.append(sample.time)
                run.linear.append(observation.linear)
                run.stroke.append(observation.stroke.length)
                run.reversals.append(observation.reversal)
            }
            if let event {
                run.events.append(event)
                run.eventIndices.append(max(0, run.times.count - 1))
            }
        }
        if let event = detector.interrupt() {
            run.events.append(event)
            run.eventIndices.append(max(0, run.times.count - 1))
        }
        return run
    }

    /// The picture, as SVG text.
    public func svg(_ samples: [Sample]) -> String {
        let run = run(samples)
        var canvas = SVGCanvas(width: width, height: height)
        let left = 70.0
        let right = width - 20
        let top = 60.0
        let upperHeight = (height - top - 70) * 0.62
        let lowerTop = top + upperHeight + 30
        let lowerHeight = height - lowerTop - 40
        let start = run.times.first ?? 0
        // A span that is not a finite positive number (one sample, a time of 1e300 where a millisecond is lost,
        // -1e308 to 1e308) is drawn as one second from the start.
        let span = (run.times.last ?? start) - start
        let duration = span.isFinite && span > 0 && start + span > start ? span : 1
        let end = start + duration
        let x = { (time: Double) in left + (time - start) / duration * (right - left) }

        let magnitudes = run.linear.map(\.length)
        let upperMax = Self.niceCeiling(max(settings.threshold * 1.5, magnitudes.max() ?? 0))
        let axisMax = Self.niceCeiling(
            max(settings.threshold, run.linear.map { max(abs($0.x), abs($0.y), abs($0.z)) }.max() ?? 0))
        let yUpper = { (value: Double) in top + upperHeight - value / upperMax * upperHeight }
        let yLower = { (value: Double) in lowerTop + lowerHeight / 2 - value / axisMax * lowerHeight / 2 }

        canvas.text(title, x: left, y: 24, size: 16, weight: "bold")
        canvas.text(summary(run.events), x: left, y: 44, size: 12, color: "#444")

        // Shading: the label, then the shakes that ended.
        for (panelTop, panelHeight) in [(top, upperHeight), (lowerTop, lowerHeight)] {
            if let label {
                canvas.rect(
                    x: x(label.start), y: panelTop, width: x(label.end) - x(label.start), height: panelHeight,
                    fill: "#fff3b0")
            }
            for case .ended(let summary) in run.events {
                canvas.rect(
                    x: x(summary.began), y: panelTop, width: x(summary.time) - x(summary.began), height: panelHeight,
                    fill: "#cfe3ff")
            }
        }

        // Axes, grid and ticks.
        // Counted, not stepped: where adding the step to a huge time changes nothing, a stepping loop never ends.
        let timeStep = Self.niceStep(duration / 12)
        // (Rounding a start near the largest double to the step can overflow: then the ticks start at the start.)
        let roundedStart = (start / timeStep).rounded(.up) * timeStep
        let firstTick = roundedStart.isFinite ? roundedStart : start
        for index in 0..<30 {
            let tick = firstTick + Double(index) * timeStep
            guard tick <= end else { break }
            canvas.line(x1: x(tick), y1: top, x2: x(tick), y2: top + upperHeight, color: "#e4e4e4")
            canvas.line(x1: x(tick), y1: lowerTop, x2: x(tick), y2: lowerTop + lowerHeight, color: "#e4e4e4")
            canvas.text(Self.label(tick), x: x(tick), y: lowerTop + lowerHeight + 16, size: 11, anchor: "middle")
        }
        canvas.text("time (s)", x: (left + right) / 2, y: height - 8, size: 12, anchor: "middle")
        let upperStep = Self.niceStep(upperMax / 5)
        for value in stride(from: 0, through: upperMax, by: upperStep) {
            canvas.line(x1: left, y1: yUpper(value), x2: right, y2: yUpper(value), color: "#eeeeee")
            canvas.text(Self.label(value), x: left - 6, y: yUpper(value) + 4, size: 11, anchor: "end")
        }
        for value in [-axisMax, -axisMax / 2, 0, axisMax / 2, axisMax] {
            canvas.line(
                x1: left, y1: yLower(value), x2: right, y2: yLower(value), color: value == 0 ? "#bbbbbb" : "#eeeeee")
            canvas.text(Self.label(value), x: left - 6, y: yLower(value) + 4, size: 11, anchor: "end")
        }
        canvas.text(
            "gravity-free |a| (m/s²)", x: 16, y: top + upperHeight / 2, size: 12, anchor: "middle", rotate: true)
        canvas.text("axes (m/s²)", x: 16, y: lowerTop + lowerHeight / 2, size: 12, anchor: "middle", rotate: true)
        canvas.rect(x: left, y: top, width: right - left, height: upperHeight, fill: "none", stroke: "#888")
        canvas.rect(x: left, y: lowerTop, width: right - left, height: lowerHeight, fill: "none", stroke: "#888")

        // Threshold lines.
        canvas.line(
            x1: left, y1: yUpper(settings.threshold), x2: right, y2: yUpper(settings.threshold),
            color: Self.thresholdColor, dash: "6,4")
        canvas.line(
            x1: left, y1: yUpper(settings.threshold / 2), x2: right, y2: yUpper(settings.threshold / 2),
            color: Self.thresholdColor, dash: "2,3")

        // Signals: the magnitude as a wide pale band under the stroke, so both show where they coincide.
        canvas.polyline(zip(run.times, magnitudes).map { (x($0), yUpper($1)) }, color: "#b8b8b8", width: 3.5)
        canvas.polyline(zip(run.times, run.stroke).map { (x($0), yUpper($1)) }, color: "#1f4e9e", width: 1.3)

        // Reversals, on the stroke.
        for (index, reversal) in run.reversals.enumerated() {
            guard let reversal else { continue }
            let px = x(run.times[index])
            let py = yUpper(run.stroke[index])
            switch reversal {
            case .confirmed:
                canvas.circle(x: px, y: py, radius: 4, fill: "#1f4e9e", stroke: "#1f4e9e")
            case .accepted:
                canvas.circle(x: px, y: py, radius: 4, fill: "white", stroke: "#1f4e9e")
            case .rejected(let detail):
                canvas.line(x1: px - 4, y1: py - 4, x2: px + 4, y2: py + 4, color: Self.rejectedColor, width: 2)
                canvas.line(x1: px - 4, y1: py + 4, x2: px + 4, y2: py - 4, color: Self.rejectedColor, width: 2)
                canvas.text(
                    detail.rawValue.replacing("_", with: " "), x: px + 5, y: py - 6, size: 9,
                    color: Self.rejectedColor)
            }
        }
        for (component, color) in [(\Vector3.x, "#d62728"), (\Vector3.y, "#2ca02c"), (\Vector3.z, "#1f77b4")] {
            canvas.polyline(
                zip(run.times, run.linear).map { (x($0), yLower($1[keyPath: component])) }, color: color, width: 1)
        }

        // Events; labels of neighbouring events are staggered so they do not overlap.
        var lastLabelEnd = -Double.infinity
        var row = 0.0
        for event in run.events {
            let position = x(event.time)
            let labelWidth = event.phase == .cancelled ? 220.0 : 40
            row = position < lastLabelEnd ? row + 14 : 0
            lastLabelEnd = position + labelWidth
            switch event {
            case .began:
                canvas.line(
                    x1: position, y1: top, x2: position, y2: lowerTop + lowerHeight, color: "#2ca02c", width: 1.5)
                canvas.text("began", x: position + 3, y: top + 12 + row, size: 11, color: "#2ca02c")
            case .ended:
                canvas.line(
                    x1: position, y1: top, x2: position, y2: lowerTop + lowerHeight, color: "#1f4e9e", width: 1.5)
                canvas.text("ended", x: position + 3, y: top + 12 + row, size: 11, color: "#1f4e9e")
            case .cancelled(_, _, let reason, let detail):
                canvas.line(
                    x1: position, y1: top, x2: position, y2: lowerTop + lowerHeight, color: "#ff7f0e", width: 1.5)
                let why = reason.rawValue + (detail.map { ": \($0.rawValue)" } ?? "")
                canvas.text("cancelled (\(why))", x: position + 3, y: top + 12 + row, size: 11, color: "#ff7f0e")
            }
        }

        // Legend.
        let legend: [(String, String)] = [
            ("|a − g|", "#b8b8b8"), ("stroke", "#1f4e9e"), ("threshold", Self.thresholdColor),
            ("rejected reversal", Self.rejectedColor), ("x", "#d62728"), ("y", "#2ca02c"), ("z", "#1f77b4"),
        ]
        var legendX = right - legend.reduce(0) { $0 + 32 + 7 * Double($1.0.count) }
        for (name, color) in legend {
            canvas.line(x1: legendX, y1: 40, x2: legendX + 18, y2: 40, color: color, width: 2)
            canvas.text(name, x: legendX + 22, y: 44, size: 11)
            legendX += 32 + 7 * Double(name.count)
        }
        return canvas.result
    }

    /// What the detector saw, one row a sample, for people who plot with their own tools:
    /// `time,linear_x,linear_y,linear_z,linear,stroke,threshold,reversal,event` (m/s² and s). `reversal` is
    /// `confirmed`, `accepted` or `rejected:DETAIL`; `event` is the phase (and reason and detail) of an event
    /// decided at that sample.
    public func csv(_ samples: [Sample]) -> String {
        let run = run(samples)
        var events: [Int: [String]] = [:]
        for (event, index) in zip(run.events, run.eventIndices) {
            var text = event.phase.rawValue
            if case .cancelled(_, _, let reason, let detail) = event {
                text += ":" + reason.rawValue + (detail.map { ":" + $0.rawValue } ?? "")
            }
            events[index, default: []].append(text)
        }
        var lines = ["time,linear_x,linear_y,linear_z,linear,stroke,threshold,reversal,event"]
        lines.reserveCapacity(run.times.count + 1)
        let number = { (value: Double) in JSONObjectWriter.format(value, decimals: 4) }
        for index in run.times.indices {
            let linear = run.linear[index]
            let reversal: String
            switch run.reversals[index] {
            case nil: reversal = ""
            case .confirmed: reversal = "confirmed"
            case .accepted: reversal = "accepted"
            case .rejected(let detail): reversal = "rejected:" + detail.rawValue
            }
            let fields = [
                number(run.times[index]), number(linear.x), number(linear.y), number(linear.z), number(linear.length),
                number(run.stroke[index]), number(settings.threshold), reversal,
                (events[index] ?? []).joined(separator: " "),
            ]
            lines.append(fields.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    func summary(_ events: [ShakeEvent]) -> String {
        let ended = events.filter { $0.phase == .ended }.count
        let cancelled = events.filter { $0.phase == .cancelled }.count
        var parts = ["threshold \(Self.label(settings.threshold)) m/s²", "\(ended) ended", "\(cancelled) cancelled"]
        if let label { parts.append("labelled \(Self.label(label.start))–\(Self.label(label.end)) s") }
        return parts.joined(separator: " · ")
    }

    static func niceStep(_ rough: Double) -> Double {
        guard rough > 0, rough.isFinite else { return 1 }
        let magnitude = pow(10, (log10(rough)).rounded(.down))
        for factor in [1.0, 2, 5, 10] where factor * magnitude >= rough {
            return factor * magnitude
        }
        return 10 * magnitude
    }

    static func niceCeiling(_ value: Double) -> Double {
        let step = niceStep(value / 5)
        return max(step, (value / step).rounded(.up) * step)
    }

    /// Numbers in the drawing are written as JSON writes them: one that is not finite (a span beyond what a
    /// Double holds) becomes `null`, never `inf` or `nan`.
    static func label(_ value: Double) -> String {
        JSONObjectWriter.format(value, decimals: 2)
    }
}

/// Just enough SVG to draw plots.
struct SVGCanvas {
    private var body = ""
    let width: Double
    let height: Double

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    var result: String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
        <rect width="100%" height="100%" fill="white"/>
        \(body)</svg>

        """
    }

    private func n(_ value: Double) -> String { JSONObjectWriter.format(value, decimals: 1) }

    mutating func line(
        x1: Double, y1: Double, x2: Double, y2: Double, color: String, width: Double = 1, dash: String? = nil
    ) {
        let dashed = dash.map { " stroke-dasharray=\"\($0)\"" } ?? ""
        body +=
            "<line x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\" stroke=\"\(color)\" stroke-width=\"\(n(width))\"\(dashed)/>\n"
    }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String, stroke: String? = nil) {
        let outline = stroke.map { " stroke=\"\($0)\"" } ?? ""
        body +=
            "<rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(max(0, width)))\" height=\"\(n(max(0, height)))\" fill=\"\(fill)\"\(outline)/>\n"
    }

    mutating func circle(x: Double, y: Double, radius: Double, fill: String, stroke: String) {
        body +=
            "<circle cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(radius))\" fill=\"\(fill)\" stroke=\"\(stroke)\" stroke-width=\"1.5\"/>\n"
    }

    mutating func polyline(_ points: [(Double, Double)], color: String, width: Double) {
        guard points.count > 1 else { return }
        // Thin out points that fall on the same pixel column, keeping each column's extremes.
        var thinned: [(Double, Double)] = []
        thinned.reserveCapacity(min(points.count, 4 * Int(self.width)))
        var column = Int.min
        var low = (0.0, Double.infinity)
        var high = (0.0, -Double.infinity)
        func flush() {
            guard column != Int.min else { return }
            if low.0 <= high.0 {
                thinned.append(low); thinned.append(high)
            } else {
                thinned.append(high); thinned.append(low)
            }
        }
        // Points far off the canvas (a trace whose times run out of the drawn span) are left out: they would not
        // show, and their column would not fit an Int.
        for point in points where point.1.isFinite && point.0.isFinite && abs(point.0) < 1e9 {
            let pixel = Int(point.0.rounded(.down))
            if pixel != column {
                flush()
                column = pixel
                low = point
                high = point
            } else {
                if point.1 < low.1 { low = point }
                if point.1 > high.1 { high = point }
            }
        }
        flush()
        let list = thinned.map { "\(n($0.0)),\(n($0.1))" }.joined(separator: " ")
        body +=
            "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(n(width))\" stroke-linejoin=\"round\" points=\"\(list)\"/>\n"
    }

    mutating func text(
        _ string: String, x: Double, y: Double, size: Double, color: String = "#222", anchor: String = "start",
        weight: String = "normal", rotate: Bool = false
    ) {
        let escaped = string.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            .replacing(">", with: "&gt;")
        let transform = rotate ? " transform=\"rotate(-90 \(n(x)) \(n(y)))\"" : ""
        body +=
            "<text x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(n(size))\" fill=\"\(color)\" text-anchor=\"\(anchor)\" font-weight=\"\(weight)\"\(transform)>\(escaped)</text>\n"
    }
}
