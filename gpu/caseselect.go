package gpu

import (
	"fmt"
	"regexp"
	"strings"
)

// SelectCases is the cases a -cases flag picks: patterns is regexps
// separated by white space (a case name has none), and a case is picked
// when its name (spec/size/dims) matches any of them; empty picks every
// case. Every pattern must match some case: a pattern gone stale (its
// case renamed or its random dims drawn again) is an error, so that a run
// never checks less than its command line says.
func SelectCases(all []Case, patterns string) ([]Case, error) {
	fields := strings.Fields(patterns)
	if len(fields) == 0 {
		return all, nil
	}
	res := make([]*regexp.Regexp, len(fields))
	hits := make([]int, len(fields))
	for i, f := range fields {
		re, err := regexp.Compile(f)
		if err != nil {
			return nil, fmt.Errorf("-cases pattern %d: %w", i+1, err)
		}
		res[i] = re
	}
	var out []Case
	for _, c := range all {
		picked := false
		for i, re := range res {
			if re.MatchString(c.Name()) {
				hits[i]++
				picked = true
			}
		}
		if picked {
			out = append(out, c)
		}
	}
	var stale []string
	for i, n := range hits {
		if n == 0 {
			stale = append(stale, fmt.Sprintf("%q", fields[i]))
		}
	}
	if len(stale) > 0 {
		return nil, fmt.Errorf("-cases: no case matches %s (of %d cases)", strings.Join(stale, ", "), len(all))
	}
	return out, nil
}
