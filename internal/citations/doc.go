// Package citations holds no code of its own: it exists for its test, which
// keeps the repository's requirement citations honest.
//
// aimeter's comments and tests cite three kinds of references: GB/T 45087
// requirement IDs ("GB-7.3-f"), the project's implementer's notes on that
// standard ("IN-63"), and sections of the LoadGen behaviour reference
// ("loadgen-reference §9", or a bare "§9"). The documents these come from are
// not in the repository; docs/requirements.md indexes every one of them with
// a short paraphrase and the place that implements it.
//
// The test walks every .go and .md file of the module, extracts each
// citation, and fails for every one that docs/requirements.md does not
// define, naming the file and line where it is cited. It also fails for index
// rows whose ID is malformed or defined twice. It matches by ID only: the
// "where" column of the index is informative and is not checked, so code can
// move between files without breaking the test.
//
// A citation ending in "-*", or a string literal ending in "-" or continued
// with "+" (code that builds the rest of the ID, as in
// fmt.Sprintf("GB-7.4.5-T11-%d", row)), names a family of IDs and resolves
// when the index defines at least one ID with that prefix.
package citations
