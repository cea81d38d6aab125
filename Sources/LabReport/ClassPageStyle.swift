/// The class page's stylesheet: sized for a projector at 1280×720, where an exercise's checks fit
/// across, no text is under 14 px, and each pass rate stands in a cell of its own.
enum ClassPageStyle {
    static let css = """
        :root { color-scheme: light; }
        body { font: 15px/1.4 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
               color: #1d1d1f; background: #fff; margin: 0; padding: 12px 16px 40px; }
        h1 { font-size: 22px; margin: 0 8px 0 0; display: inline-block; }
        h2 { font-size: 18px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d8d8dc; }
        header .facts { display: inline; color: #333; }
        .note { color: #555; max-width: 90ch; }
        ul.legend { list-style: none; padding: 0; margin: 6px 0 10px; display: flex; flex-wrap: wrap; gap: 4px 18px; }
        details.exercise { margin: 4px 0 12px; }
        details.exercise > summary { font-size: 16px; padding: 4px 0; }
        table.grid { border-collapse: collapse; font-size: 14px; margin-top: 4px; }
        table.grid th, table.grid td { border: 1px solid #e3e3e8; padding: 0; text-align: center; }
        table.grid th.student { text-align: left; padding: 2px 8px 2px 4px; max-width: 11em; overflow: hidden;
                                text-overflow: ellipsis; white-space: nowrap; font-weight: 600; }
        table.grid thead th { background: #f5f5f7; }
        table.grid th.check { vertical-align: bottom; font-weight: 400; line-height: 1.2; padding: 4px 5px; max-width: 6.5em; }
        table.grid td { min-width: 28px; height: 24px; }
        table.grid td.last, table.grid th.last { color: #555; padding: 0 6px; white-space: nowrap; }
        table.grid td .mark { font-size: 15px; font-weight: 700; }
        td.fixed, .mark.fixed { background: #dff3e4; color: #1b6b32; }
        td.failing, .mark.failing { background: #fbe3e4; color: #a3161f; }
        td.broken, .mark.broken { background: #fff0c2; color: #7a5400; }
        td.not-started, .mark.not-started { background: #f0f0f3; color: #666; }
        td.baseline, .mark.baseline { background: #fff; color: #999; }
        td.not-run, .mark.not-run { color: #aaa; }
        ul.legend .mark { display: inline-block; width: 22px; text-align: center; font-weight: 700; border-radius: 3px; }
        tfoot tr.pass-rate th, tfoot tr.pass-rate td { font-weight: 600; padding: 3px 6px; background: #f5f5f7;
                                                       font-variant-numeric: tabular-nums; white-space: nowrap; }
        details { margin: 2px 0; }
        details summary { cursor: pointer; }
        details .name { font-weight: 600; }
        table.spread { border-collapse: collapse; font-size: 14px; }
        table.spread th, table.spread td { padding: 4px 10px; border-bottom: 1px solid #e3e3e8; text-align: left; }
        table.spread td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        table.spread tr.attention td { background: #fdecee; }
        details.run svg { max-width: 1100px; display: block; margin: 4px 0 10px; }
        """ + "\n" + ExchangePicture.rules(scope: "svg.run-picture ")
}
