"""What the tests share and are not tests themselves: fixtures' helpers, fault injectors, subprocess children."""
