"""What the page checks read from and do on the page in the browser (scripts/page/page_check.py,
tls_check.py): waits on the page's own state, its figures, choosing a day, logging in."""
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import day_rig
from day_rig import rig


def wait(driver, script, what, timeout=15):
    return rig.wait_until(lambda: driver.execute_script(script), timeout, what)


def text(driver, selector):
    return driver.execute_script("var e = document.querySelector(arguments[0]); return e ? e.textContent : null;", selector)


def value(driver, field):
    return driver.execute_script(
        "var e = document.querySelector('#figures [data-field=\"' + arguments[0] + '\"], #sleep [data-field=\"' + arguments[0] + '\"]');"
        "return e ? e.dataset.value : null;", field)


def choose(driver, date, how="strip"):
    """Chooses a day as a person would (a click on the strip, or the calendar) and waits for it."""
    driver.execute_script("delete document.body.dataset.drawn;")
    if how == "strip":
        driver.find_element(By.CSS_SELECTOR, f'#strip [data-date="{date}"]').click()
    elif how == "key":
        # From the chosen day to the one before, with the keyboard (the strip is a listbox).
        driver.find_element(By.CSS_SELECTOR, '#strip [aria-selected="true"]').send_keys(Keys.ARROW_LEFT)
    else:
        driver.execute_script("var c = document.getElementById('calendar'); c.value = arguments[0];"
                              "c.dispatchEvent(new Event('change'));", date)
    wait(driver, f"return document.body.dataset.drawn === '{date}';", f"the page to draw {date}")
    return int(driver.execute_script("return document.body.dataset.drawnMs;"))


def same(shown, expected, what):
    expected_text = "" if expected is None else str(expected)
    if isinstance(expected, str):
        assert shown == expected_text, f"{what}: page {shown!r}, reply {expected_text!r}"
    elif expected_text and shown:
        assert abs(float(shown) - float(expected_text)) < 1e-9, f"{what}: page {shown}, reply {expected_text}"
    else:
        assert shown == expected_text, f"{what}: page {shown!r}, reply {expected_text!r}"


def same_figures(driver, reference):
    """The day's figures on the page against the agent's reply for it."""
    health = reference["health"]
    hr = health["heart_rate"] or {}
    sleep = health["sleep"] or {}
    for field_name, expected in [("steps", health["steps"]), ("distance_m", (health["location"] or {}).get("distance_m")),
                                 ("hr_min", hr.get("min")), ("hr_avg", hr.get("avg")), ("hr_max", hr.get("max")),
                                 ("hr_resting", hr.get("resting")), ("sleep_s", health["sleep_s"]),
                                 ("sleep_start", sleep.get("start")), ("sleep_end", sleep.get("end")),
                                 ("sleep_efficiency", sleep.get("efficiency")), ("sleep_awakenings", sleep.get("awakenings"))]:
        same(value(driver, field_name), expected, field_name)


def log_in(driver, password, today):
    """The page's account with its password; waits until today is drawn."""
    driver.find_element(By.ID, "user").send_keys(day_rig.PAGE_USER)
    driver.find_element(By.ID, "password").send_keys(password + Keys.ENTER)
    wait(driver, f"return document.body.dataset.drawn === '{today}';",
         "today drawn after logging in", 20)
