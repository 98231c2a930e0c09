package errorssvc

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/defectshowcase/showcase/platform/respond"
)

// digitError is the unhandled failure of a non-digit character.
type digitError struct {
	char rune
	pos  int
}

func (e digitError) Error() string {
	return fmt.Sprintf("invalid literal for int() with base 10: %s (character %d)", strconv.QuoteRune(e.char), e.pos)
}

// cardDigits converts every character of the card number to its value
// with digit; the first character that is not a digit is the error.
func cardDigits(number string, digit func(rune) (int, bool)) ([]int, error) {
	digits := make([]int, 0, len(number))
	pos := 0
	for _, c := range number {
		d, ok := digit(c)
		if !ok {
			return nil, digitError{char: c, pos: pos}
		}
		digits = append(digits, d)
		pos++
	}
	return digits, nil
}

// luhnChecksum is the Luhn sum: from the right, every second digit doubled,
// the digits of each product added.
func luhnChecksum(digits []int) int {
	sum := 0
	for i := range digits {
		d := digits[len(digits)-1-i]
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum
}

// answerLuhn answers whether the digits pass the Luhn check.
func answerLuhn(w http.ResponseWriter, digits []int) {
	if luhnChecksum(digits)%10 == 0 {
		respond.JSON(w, http.StatusOK, successBody)
		return
	}
	respond.JSON(w, http.StatusOK, failureBody)
}
