import Testing
@testable import Store

/// The array literals the claim and the recorder send as one parameter each.
@Suite struct PGArrayTests {
    @Test func quotesEveryElementAndEscapesBackslashAndQuote() {
        #expect(PGArray.literal(["a", "b c", "", "x,y", "{z}"]) == #"{"a","b c","","x,y","{z}"}"#)
        #expect(PGArray.literal([#"say "hi""#, #"C:\dir\"#, #"\""#]) == #"{"say \"hi\"","C:\\dir\\","\\\""}"#)
    }

    @Test func nilIsNullAndAnEmptyListIsTheEmptyArray() {
        #expect(PGArray.literal([String?]()) == "{}")
        #expect(PGArray.literal(["a", nil, "NULL"]) == #"{"a",NULL,"NULL"}"#)
    }

    @Test func keepsNonASCIITextAsIs() {
        #expect(PGArray.literal(["王小明", "José 👋", "a\u{0301}"]) == "{\"王小明\",\"José 👋\",\"a\u{0301}\"}")
    }
}
