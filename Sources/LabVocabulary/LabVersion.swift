/// The lab's version: `lab --version`, and in every record a teacher collects (`lab exercise
/// check --json`), so results from different copies of the lab can be told apart.
public enum LabVersion {
    public static let current = "0.9.0"
}
