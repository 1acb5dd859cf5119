package report

// Serving are the LLM-serving figures of a run that result.json holds as
// well (package derived computes both from the bundle): goodput against
// the run's SLO, the send lateness of a run on a schedule, and a
// multi-turn run's figures. Each row is shown as it is, in order.
type Serving struct {
	// Note, if set, heads the table (where the SLO came from, say).
	Note string
	// Rows are the figures: a group ("Goodput", "Send lateness",
	// "Sessions"), a name and the value as text.
	Rows []ServingRow
}

// ServingRow is one figure of Serving.
type ServingRow struct {
	Group, Name, Value string
}

// servingView is the serving part of a scenario's section.
type servingView struct {
	Note  string
	Table table
}

func buildServing(s *Serving) *servingView {
	if s == nil || len(s.Rows) == 0 {
		return nil
	}
	v := &servingView{Note: s.Note, Table: table{Head: []string{"Figure", "Name", "Value"}}}
	for _, r := range s.Rows {
		v.Table.Rows = append(v.Table.Rows, []string{r.Group, r.Name, r.Value})
	}
	return v
}
