@testable import GeomonConfig
import Testing

/// Plain ASCII ids are decided on their bytes, others by the full rule: both must agree with
/// the rule as documented.
struct FenceIDRuleTests {
    @Test(arguments: [
        ("home", nil),
        ("Praha 17", nil),
        (String(repeating: "a", count: 128), nil),
        ("Zürich", nil),
        ("", "must not be empty"),
        (" home", "must not begin or end with a space (got ' home')"),
        ("home ", "must not begin or end with a space (got 'home ')"),
        ("\u{00A0}home", "must not begin or end with a space (got '\u{00A0}home')"),
        ("tab\there", "must not contain control characters (got \"tab\\there\")"),
        ("del\u{7F}", "must not contain control characters (got \"del\\u{7F}\")"),
        (String(repeating: "a", count: 129), "must be at most 128 characters (got 129)"),
    ] as [(String, String?)])
    func idsAreCheckedByTheRule(_ id: String, _ problem: String?) {
        #expect(FenceIDRule.problem(id) == problem)
    }
}
