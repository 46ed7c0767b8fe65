package answerplan

import "mlerl/runrecord"

// BestRefitLeader is the answer when no candidate is left to choose from: the first of the
// run's leaders (best first by validation, never by the test answers) whose refit on the full
// public train wrote a valid submission; "" when none has.
func BestRefitLeader(leaders []string, graded map[string]*runrecord.FinalGradeResult) string {
	for _, id := range leaders {
		if g := graded[id]; g != nil && g.Report.ValidSubmission {
			return id
		}
	}
	return ""
}
