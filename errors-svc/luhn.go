package errorssvc

import (
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

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

// cardNumber is a card number whose every character is a digit of its
// kind.
type cardNumber struct {
	text  string
	digit func(rune) (int, bool)
}

// cardDigits checks that every character of the card number is a digit
// with digit; the first character that is not one is the error. It keeps
// nothing per character: a megabyte of digits costs no more memory than
// its text.
func cardDigits(number string, digit func(rune) (int, bool)) (cardNumber, error) {
	pos := 0
	for _, c := range number {
		if _, ok := digit(c); !ok {
			return cardNumber{}, digitError{char: c, pos: pos}
		}
		pos++
	}
	return cardNumber{number, digit}, nil
}

// luhnChecksum is the Luhn sum: from the right, every second digit doubled,
// the digits of each product added.
func luhnChecksum(n cardNumber) int {
	sum := 0
	for i, rest := 0, n.text; rest != ""; i++ {
		c, size := utf8.DecodeLastRuneInString(rest)
		rest = rest[:len(rest)-size]
		d, _ := n.digit(c)
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
func answerLuhn(w http.ResponseWriter, digits cardNumber) {
	if luhnChecksum(digits)%10 == 0 {
		respond.JSON(w, http.StatusOK, successBody)
		return
	}
	respond.JSON(w, http.StatusOK, failureBody)
}
