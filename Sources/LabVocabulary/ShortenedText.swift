extension String {
    /// The text as it is, or its first `limit - 1` characters and "…" when it is longer: one
    /// bound on what a record keeps or a person is shown, however long the text that came in.
    public func shortened(to limit: Int) -> String {
        count <= limit ? self : String(prefix(limit - 1)) + "…"
    }
}
