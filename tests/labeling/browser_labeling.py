"""Drives the labeling page in headless Chromium (Debian's chromium and chromedriver, through
Selenium): places two keypoints by clicking the canvas, moves one by dragging, deletes the other
with a right-click, reloads, and prints what the page then shows as one JSON line.

Usage: browser_labeling.py URL  (the URL with ?token= that labpose label prints)
The caller (browser_test.cpp) compares the printed points with the CSV on disk.
"""
import json
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.mouse_button import MouseButton
from selenium.webdriver.support.ui import WebDriverWait


def settled(driver):
    """The page has loaded and no change is waiting for the server."""
    return driver.execute_script(
        "return !!(window.labpose && window.labpose.ready && window.labpose.state.pending === 0"
        " && window.labpose.state.frame)")


def screen(driver, x, y):
    at = driver.execute_script("return window.labpose.imageToClient(arguments[0], arguments[1]);", x, y)
    return round(at["x"]), round(at["y"])


def pointer(driver):
    return ActionBuilder(driver)


def click(driver, x, y, button=MouseButton.LEFT):
    actions = pointer(driver)
    actions.pointer_action.move_to_location(*screen(driver, x, y))
    actions.pointer_action.pointer_down(button)
    actions.pointer_action.pointer_up(button)
    actions.perform()
    WebDriverWait(driver, 10).until(settled)


def drag(driver, start, end):
    actions = pointer(driver)
    sx, sy = screen(driver, *start)
    ex, ey = screen(driver, *end)
    actions.pointer_action.move_to_location(sx, sy)
    actions.pointer_action.pointer_down(MouseButton.LEFT)
    for step in range(1, 11):
        actions.pointer_action.move_to_location(round(sx + (ex - sx) * step / 10),
                                                round(sy + (ey - sy) * step / 10))
    actions.pointer_action.pointer_up(MouseButton.LEFT)
    actions.perform()
    WebDriverWait(driver, 10).until(settled)


def points(driver):
    return driver.execute_script("return window.labpose.state.frame.points;")


def main():
    url = sys.argv[1]
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="labpose-chromium-")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--user-data-dir={profile}", "--window-size=1200,800"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(url)
        WebDriverWait(driver, 20).until(settled)
        assert "token=" not in driver.current_url, driver.current_url
        bodyparts = driver.execute_script("return window.labpose.state.project.bodyparts;")
        # Two keypoints by clicking: the current bodypart (snout), then the next (leftear).
        click(driver, 10.5, 20.5)
        assert points(driver)[0] is not None, points(driver)
        click(driver, 40.25, 30.75)
        after_clicks = points(driver)
        assert after_clicks[1] is not None, after_clicks
        # Move the snout by dragging it, delete the leftear with a right-click.
        drag(driver, (after_clicks[0]["x"], after_clicks[0]["y"]), (20.5, 10.5))
        click(driver, after_clicks[1]["x"], after_clicks[1]["y"], MouseButton.RIGHT)
        driver.refresh()
        WebDriverWait(driver, 20).until(settled)
        shown = driver.execute_script(
            "return [...document.querySelectorAll('#bodyparts li')]"
            ".map((li) => [li.dataset.bodypart, li.querySelector('.where').textContent]);")
        print(json.dumps({"bodyparts": bodyparts, "after_clicks": after_clicks,
                          "points": points(driver), "list": shown}))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
