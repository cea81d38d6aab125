/// The report's one stylesheet, inline so that the page stands alone and prints as it shows.
enum ReportStyle {
    /// Reserved for failures nobody expected, so that red always means "look here".
    static let failureColour = "#b00020"
    /// A failure the article is there to show: noticeable, but calm.
    static let expectedFailureColour = "#9c7f2a"

    static let css = """
        :root { color-scheme: light; }
        body { font: 15px/1.45 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
               color: #1d1d1f; background: #fff; max-width: 1100px; margin: 0 auto; padding: 24px 28px 48px; }
        h1 { font-size: 26px; margin: 0 0 8px; }
        h2 { font-size: 20px; margin: 36px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d8d8dc; }
        .note { color: #555; max-width: 75ch; margin: 6px 0 12px; }
        ul.machines { list-style: none; padding: 0; margin: 0 0 8px; }
        ul.machines li { margin: 2px 0; }
        .label { font-weight: 600; color: #3a3a8c; }
        nav ul.contents { list-style: none; padding: 0; margin: 12px 0 0; display: flex; flex-wrap: wrap; gap: 4px 16px; }
        a { color: #1f5fbf; }

        ul.verdicts { padding-left: 0; list-style: none; font-size: 14px; }
        ul.verdicts li { margin: 4px 0; padding: 3px 0 3px 10px; border-left: 4px solid #d8d8dc; }
        ul.verdicts li.attention { border-left-color: \(failureColour); background: #fdecee; }
        ul.verdicts li.group { border-left: none; padding-left: 0; }
        ul.verdicts ul { list-style: none; padding-left: 14px; margin: 2px 0 6px; }
        ul.verdicts li .label { margin-right: 2px; }

        table { border-collapse: collapse; margin: 12px 0 24px; font-size: 13.5px; width: 100%; }
        caption { text-align: left; font-weight: 600; font-size: 15px; padding: 4px 0 6px; }
        th, td { padding: 5px 8px; border-bottom: 1px solid #e3e3e8; text-align: left; vertical-align: top; }
        thead th { border-bottom: 2px solid #b8b8c0; background: #f5f5f7; }
        tbody th { font-weight: 600; white-space: nowrap; }
        .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        .none { color: #888; }
        table[data-table="environment"] td.num { text-align: left; }
        td.lesson { min-width: 11em; }
        tr.continued td.lesson, tr.continued td.variant { color: #9a9aa2; }
        tr.continued .lesson-id { display: none; }
        tbody tr:has(+ tr.continued) > * { border-bottom-style: dotted; }
        td.scenario { white-space: nowrap; }
        .lesson-id { display: block; color: #777; font-size: 12px; }
        .detail { color: #444; }
        td.variant.article { font-style: italic; }

        .status { display: inline-block; padding: 0 6px; border-radius: 4px; font-weight: 600; font-size: 12.5px; }
        .status.pass { background: #e3f3e6; color: #1b5e20; }
        .status.refused { background: #e6ecf5; color: #2c4a77; }
        .status.fail.expected { background: #f4efe2; color: #6d5a1f; border: 1px dashed \(expectedFailureColour); font-weight: 500; }
        .status.fail.unexpected { background: \(failureColour); color: #fff; }
        .mark { margin-left: 4px; font-size: 12px; color: #6d5a1f; font-style: italic; }
        .cause { display: block; font-size: 12px; color: #555; margin-top: 2px; }
        .again, .size, .second-launch { display: block; font-size: 12px; color: #444; }
        td.outcome:has(.unexpected) { background: #fdecee; box-shadow: inset 3px 0 0 \(failureColour); }
        td.not-run { color: #aaa; font-size: 12px; }
        ul.matrix-legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 20px; font-size: 13px; color: #444; }
        table[data-table="fault-matrix"] td { min-width: 7em; }

        figure.chart { margin: 12px 0 24px; }
        figure.chart figcaption { margin-bottom: 4px; }
        svg { width: 100%; height: auto; display: block; font-family: inherit; }
        svg .grid { stroke: #e6e6ea; stroke-width: 1; }
        svg .plot { fill: none; stroke: #b8b8c0; stroke-width: 1; }
        svg .panel-title { font-size: 13px; fill: #222; font-weight: 600; }
        svg .baseline { stroke: #6b6b73; stroke-width: 1.5; stroke-dasharray: 12 3 2 3; }
        svg .tick { font-size: 12px; fill: #444; }
        svg .axis-title { font-size: 13px; fill: #222; font-weight: 600; }
        svg .legend-text, svg .bar-label { font-size: 13px; fill: #222; }
        svg .bar-note { font-size: 13px; fill: #222; font-weight: 600; }
        svg .bar-note.inside { fill: #000; }
        svg .bar-note.inside.light { fill: #fff; }
        svg .event-line { stroke: #000; stroke-width: 1.2; stroke-dasharray: 3 3; }
        svg .event-label { font-size: 12px; fill: #000; font-style: italic; }
        svg .bar-value { font-size: 12px; fill: #333; }
        svg .note-text { font-size: 12px; fill: #555; }
        svg .diagonal { stroke: #9a9aa2; stroke-width: 1.5; stroke-dasharray: 2 4; }
        svg .limit line { stroke: #333; stroke-width: 1.5; stroke-dasharray: 5 3; }
        svg .limit text { font-size: 12px; fill: #333; font-weight: 600; }

        ul.lesson-pages { columns: 2; padding-left: 20px; }

        @media print {
            body { max-width: none; padding: 0; font-size: 11pt; }
            nav { display: none; }
            a { color: inherit; }
            h2 { break-after: avoid; }
            figure.chart, ul.verdicts li, tr, .matrix-legend { break-inside: avoid; }
            thead { display: table-header-group; }
            table[data-table="fault-matrix"], table[data-table="environment"], table[data-table="references"] { break-inside: avoid; }
            .status, td.outcome:has(.unexpected), ul.verdicts li.attention { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
        }
        """
}
